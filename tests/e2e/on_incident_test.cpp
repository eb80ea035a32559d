// `msmon ingest --on-incident CMD`: the user's command runs once per new incident with the incident as JSON on
// its stdin — after a one-shot ingest and live under --follow; never again for an incident the store already
// held; a command that hangs is killed (with what it started) at its timeout while ingest goes on; text from the
// monitored files reaches the command only inside the JSON, never as shell text.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

std::vector<std::string> lines_of(const std::string& path) {
    std::vector<std::string> out;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) out.push_back(line);
    return out;
}

std::string simulate(const TempDir& tmp, const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {program("msmon"), "simulate", tmp / "job", "--ranks", "4", "--params", "6"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const auto r = run(argv, isolated_env(tmp));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return tmp / "job";
}

// A process is gone (or a zombie nobody reaped yet: it runs no more).
bool process_gone(pid_t pid) {
    if (::kill(pid, 0) != 0) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), {});
    const auto close = text.rfind(')');
    return close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'Z';
}

TEST(OnIncident, a_planted_nan_runs_the_command_once_with_the_incident_and_a_second_ingest_runs_it_never) {
    TempDir tmp;
    const std::string job = simulate(tmp, {"--steps", "40", "--faults", "nan@20:r2"});
    const std::string cmd = "cat >> '" + tmp.path() +
                            "/runs.jsonl'; echo \"$MSMON_STEP $MSMON_RANK $MSMON_EVENT\" >> '" + tmp.path() +
                            "/env.txt'";
    auto r =
        run({program("msmon"), "ingest", job, "--db", tmp / "s.db", "--on-incident", cmd, "--json"}, isolated_env(tmp));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto summary = nlohmann::json::parse(r.out);
    EXPECT_EQ(summary["on_incident"]["ran"], 1) << r.out;
    EXPECT_EQ(summary["on_incident"]["failed"], 0) << r.out;

    const auto runs = lines_of(tmp / "runs.jsonl");
    ASSERT_EQ(runs.size(), 1u) << read_file(tmp / "runs.jsonl");
    const auto incident = nlohmann::json::parse(runs[0]);
    EXPECT_EQ(incident["event"], "incident");
    EXPECT_EQ(incident["step"], 20);
    EXPECT_EQ(incident["rank"], 2) << "the NaN was planted on rank 2";
    EXPECT_EQ(incident["rule"], "NonFinite");
    EXPECT_GE(incident["score"].get<double>(), 20.0);
    EXPECT_EQ(incident["job"], std::filesystem::path(job).lexically_normal().string());
    EXPECT_FALSE(incident["module"].get<std::string>().empty());
    EXPECT_GT(incident["anomalies"].get<int>(), 1);
    EXPECT_EQ(incident["ranks"].size(), 4u) << "the NaN reached every rank through the all-reduce";
    EXPECT_EQ(read_file(tmp / "env.txt"), "20 2 incident\n");

    // The same incident, the same store: nothing new.
    r = run({program("msmon"), "ingest", job, "--db", tmp / "s.db", "--on-incident", cmd, "--json"}, isolated_env(tmp));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["on_incident"]["ran"], 0);
    EXPECT_EQ(lines_of(tmp / "runs.jsonl").size(), 1u);
}

TEST(OnIncident, a_healthy_run_runs_nothing) {
    TempDir tmp;
    const std::string job = simulate(tmp, {"--steps", "60"});
    const auto r = run({program("msmon"), "ingest", job, "--db", tmp / "s.db", "--on-incident",
                        "touch '" + tmp.path() + "/ran'", "--json"},
                       isolated_env(tmp));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["on_incident"]["ran"], 0);
    EXPECT_FALSE(std::filesystem::exists(tmp / "ran"));
}

TEST(OnIncident, following_a_live_run_the_command_runs_once_when_the_nan_arrives) {
    TempDir tmp;
    // The job writes a step every 40 ms; the NaN comes at step 30, about 1.2 s in.
    // With MindFormers' logs too: the step's global-norm line can be read before the CSV rows where the NaN began;
    // the command is run once the incident has settled, naming where it began.
    Background sim({program("msmon"), "simulate", tmp / "job", "--ranks", "4", "--params", "6", "--steps", "70",
                    "--step-ms", "40", "--faults", "nan@30:r1", "--logs"},
                   tmp.path(), isolated_env(tmp));
    ASSERT_GE(
        wait_until([&] { return std::filesystem::exists(tmp / "job/monitor_output"); }, milliseconds(10000)).count(),
        0);
    Background ingest({program("msmon"), "ingest", tmp / "job", "--follow", "--db", tmp / "s.db", "--json",
                       "--on-incident", "cat >> '" + tmp.path() + "/runs.jsonl'"},
                      tmp.path(), isolated_env(tmp));
    ASSERT_GE(wait_until([&] { return lines_of(tmp / "runs.jsonl").size() >= 1; }, milliseconds(30000)).count(), 0)
        << "no run of the command; stderr: " << ingest.err();
    EXPECT_EQ(sim.wait(milliseconds(60000)), 0);
    // The run's last steps ingested: the store holds what a one-shot ingest of the ended run holds of them. Stopping
    // then judges and announces what is left.
    const auto last_steps = [&](const std::string& db) {  // the values of steps 69 and 70 (the logs' last), sorted
        std::string error;
        std::vector<std::string> keys;
        for (const auto& row : query_rows(db, {"--steps", "69-70"}, isolated_env(tmp), error))
            keys.push_back(row.key() + "=" + row.value);
        std::sort(keys.begin(), keys.end());
        return keys;
    };
    ASSERT_EQ(run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "whole.db"}, isolated_env(tmp)).exit_code, 0);
    const auto whole = last_steps(tmp / "whole.db");
    ASSERT_FALSE(whole.empty());
    EXPECT_GE(wait_until([&] { return last_steps(tmp / "s.db") == whole; }, milliseconds(10000)).count(), 0)
        << "the run's last steps never reached the store; stderr: " << ingest.err();
    ingest.signal(SIGTERM);
    ASSERT_EQ(ingest.wait(milliseconds(30000)), 0) << ingest.err();
    const auto runs = lines_of(tmp / "runs.jsonl");
    ASSERT_EQ(runs.size(), 1u) << read_file(tmp / "runs.jsonl");
    const auto incident = nlohmann::json::parse(runs[0]);
    EXPECT_EQ(incident["step"], 30);
    EXPECT_EQ(incident["rank"], 1);
    EXPECT_EQ(incident["rule"], "NonFinite") << runs[0];
    EXPECT_EQ(nlohmann::json::parse(ingest.out())["on_incident"]["ran"], 1) << ingest.out();
}

TEST(OnIncident, a_command_that_hangs_is_killed_with_what_it_started_at_its_timeout_and_ingest_goes_on) {
    TempDir tmp;
    Background sim({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--params", "4", "--steps", "90",
                    "--step-ms", "40", "--faults", "nan@5:r0"},
                   tmp.path(), isolated_env(tmp));
    ASSERT_GE(
        wait_until([&] { return std::filesystem::exists(tmp / "job/monitor_output"); }, milliseconds(10000)).count(),
        0);
    // The command leaves a child of its own in the background, then hangs.
    const std::string cmd = "sleep 300 & echo $! > '" + tmp.path() + "/child.pid'; sleep 300";
    const auto started = std::chrono::steady_clock::now();
    Background ingest({program("msmon"), "ingest", tmp / "job", "--follow", "--db", tmp / "s.db", "--json",
                       "--on-incident", cmd, "--on-incident-timeout", "8"},
                      tmp.path(), isolated_env(tmp));
    ASSERT_GE(wait_until([&] { return std::filesystem::exists(tmp / "child.pid"); }, milliseconds(20000)).count(), 0)
        << ingest.err();
    EXPECT_EQ(sim.wait(milliseconds(60000)), 0);
    // While the command hangs, the run's last step still reaches the store.
    auto last_step_stored = [&] {
        return run({program("msmon"), "query", "--db", tmp / "s.db", "--rank", "1", "--steps", "89", "--kind",
                    "grad_reduced", "--op", "norm"},
                   isolated_env(tmp))
                   .out.find(",89,") != std::string::npos;
    };
    ASSERT_GE(wait_until(last_step_stored, milliseconds(5000)).count(), 0) << "ingest waited for the command";
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(8 + 6))
        << "too slow to tell whether ingest waited for the command";
    // At the timeout (8 s after it started) the command and its background child are killed, ingest still running.
    const pid_t child = std::stoi(read_file(tmp / "child.pid"));
    EXPECT_GE(wait_until([&] { return process_gone(child); }, milliseconds(8000 + 10000)).count(), 0)
        << "the command's background child " << child << " outlived its timeout";
    if (!process_gone(child)) ::kill(child, SIGKILL);
    EXPECT_FALSE(process_gone(ingest.pid())) << "ingest ended with the command";
    ingest.signal(SIGTERM);
    ASSERT_EQ(ingest.wait(milliseconds(30000)), 0) << ingest.err();
    const auto summary = nlohmann::json::parse(ingest.out());
    EXPECT_EQ(summary["on_incident"]["timed_out"], 1) << ingest.out();
    EXPECT_EQ(summary["on_incident"]["ran"], 0);
    EXPECT_NE(ingest.err().find("ran past its timeout of 8000 ms and was killed"), std::string::npos) << ingest.err();
}

// A signal ends the process within 2 s in every state. A follower stopped while its command hung waited
// for the command's timeout (20 s by default) and a second more. Now the command gets half a second, then it and
// all it started are ended; the follower exits 0 (how a service stops) within 2 s of SIGINT or SIGTERM.
TEST(OnIncident, a_signal_ends_a_follower_within_2_s_while_its_command_hangs) {
    TempDir tmp;
    const auto sim = run({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--params", "4", "--steps", "12",
                          "--faults", "nan@5:r0"},
                         isolated_env(tmp));
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    for (const int sig : {SIGINT, SIGTERM}) {
        const std::string mark = tmp / ("started." + std::to_string(sig));
        std::filesystem::remove(mark);
        Background ingest(
            {program("msmon"), "ingest", tmp / "job", "--follow", "--json", "--db",
             tmp / ("s" + std::to_string(sig) + ".db"), "--on-incident", "echo $$ > '" + mark + "'; sleep 300"},
            tmp.path(), isolated_env(tmp));
        auto started = [&] {
            std::error_code ec;
            const auto size = std::filesystem::file_size(mark, ec);
            return !ec && size > 1;
        };
        ASSERT_GE(wait_until(started, milliseconds(30000)).count(), 0) << ingest.err();
        const pid_t shell = std::stoi(read_file(mark));
        const auto signalled = std::chrono::steady_clock::now();
        ingest.signal(sig);
        EXPECT_EQ(ingest.wait(milliseconds(30000)), 0) << ingest.err();
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
        EXPECT_LT(took, 2.0) << "signal " << sig << ": the follower took " << took << " s to stop";
        EXPECT_NE(ingest.err().find("--on-incident command was ended: msmon was stopping"), std::string::npos)
            << ingest.err();
        EXPECT_TRUE(process_gone(shell)) << "the command outlived msmon";
        if (!process_gone(shell)) ::kill(shell, SIGKILL);
    }
}

// A command whose child calls setsid() leaves the command's process group: killing the group at the timeout left
// it running. Everything the command started is followed and killed, in its group or not.
TEST(OnIncident, a_child_that_leaves_the_commands_process_group_is_killed_at_the_timeout_too) {
    TempDir tmp;
    const auto sim = run({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--params", "4", "--steps", "12",
                          "--faults", "nan@5:r0"},
                         isolated_env(tmp));
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    const std::string cmd = "setsid sh -c 'echo $$ > \"" + tmp.path() + "/escaped.pid\"; exec sleep 300' & sleep 300";
    const auto ingest = run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "s.db", "--json", "--on-incident",
                             cmd, "--on-incident-timeout", "2"},
                            isolated_env(tmp));
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    EXPECT_NE(ingest.err.find("ran past its timeout of 2000 ms and was killed"), std::string::npos) << ingest.err;
    ASSERT_TRUE(std::filesystem::exists(tmp / "escaped.pid")) << "the command never started its child";
    const pid_t escaped = std::stoi(read_file(tmp / "escaped.pid"));
    EXPECT_NE(::getsid(escaped), ::getsid(0)) << "the child did not leave the session (setsid)";
    EXPECT_GE(wait_until([&] { return process_gone(escaped); }, milliseconds(3000)).count(), 0)
        << "the command's setsid child " << escaped << " outlived its timeout";
    if (!process_gone(escaped)) ::kill(escaped, SIGKILL);
}

TEST(OnIncident, hostile_module_names_reach_the_command_only_escaped_inside_the_json) {
    TempDir tmp;
    // A tensor whose name is shell text, quotes and an escape sequence, finite for three steps, then NaN.
    const std::string hostile = "layers.0.$(touch PWNED1);`touch PWNED2`|touch PWNED3 '\"\x1b]0;t\x07.weight";
    std::string quoted = "\"";
    for (char c : hostile) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    quoted += "\"";
    const std::string folder = tmp / "job/monitor_output/Nov22_10-00-00-rank0-0000abcd";
    std::filesystem::create_directories(folder);
    std::string csv = "vpp_stage,name,step,min,max,norm,mean,nans,zeros,shape,dtype\n";
    for (int step = 0; step < 6; ++step)
        csv += "0," + quoted + "," + std::to_string(step) + ",-1,1," + (step == 4 ? "nan" : "1.5") +
               ",0,0,0,\"[4, 4]\",torch.float32\n";
    write_file(folder + "/grad_reduced_0-5.csv", csv);
    const std::string cmd = "cd '" + tmp.path() + "' && cat > incident.json";
    const auto r = run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "s.db", "--on-incident", cmd, "--json"},
                       isolated_env(tmp));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const char* f : {"PWNED1", "PWNED2", "PWNED3"}) {
        EXPECT_FALSE(std::filesystem::exists(tmp / f)) << f << ": file text ran as a command";
        EXPECT_FALSE(std::filesystem::exists(f)) << f << ": file text ran as a command";
    }
    const std::string text = read_file(tmp / "incident.json");
    ASSERT_FALSE(text.empty()) << r.out << r.err;
    for (unsigned char c : text.substr(0, text.size() - 1))
        ASSERT_TRUE(c >= 0x20 && c < 0x7f) << "a raw byte " << int(c) << " reached the command's stdin";
    const auto incident = nlohmann::json::parse(text);
    EXPECT_EQ(incident["module"], hostile) << "the name arrives whole, decoded from the JSON";
    EXPECT_EQ(incident["step"], 4);
}

TEST(OnIncident, a_failing_command_is_logged_once_and_ingest_still_succeeds) {
    TempDir tmp;
    const std::string job = simulate(tmp, {"--steps", "30", "--faults", "nan@10:r0"});
    const auto r = run({program("msmon"), "ingest", job, "--db", tmp / "s.db", "--on-incident",
                        "echo no route to the pager >&2; exit 3", "--json"},
                       isolated_env(tmp));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["on_incident"]["failed"], 1);
    EXPECT_NE(r.err.find("exited with status 3 (its output ended: no route to the pager"), std::string::npos) << r.err;
    EXPECT_NE(read_file(log_path(tmp)).find("exited with status 3"), std::string::npos);
}

// The settings file's on_incident command runs when no flag gives one; a flag wins over it.
TEST(OnIncident, the_settings_file_gives_the_default_command_and_a_flag_wins) {
    TempDir tmp;
    const std::string job = simulate(tmp, {"--steps", "30", "--faults", "nan@10:r0"});
    write_file(tmp / "settings.toml",
               "[on_incident]\ncommand = \"echo from-settings >> '" + tmp.path() + "/who'\"\ntimeout_s = 5\n");
    auto env = isolated_env(tmp);
    env["MSMON_CONFIG"] = tmp / "settings.toml";
    auto r = run({program("msmon"), "ingest", job, "--db", tmp / "a.db", "--json"}, env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(read_file(tmp / "who"), "from-settings\n");
    r = run({program("msmon"), "ingest", job, "--db", tmp / "b.db", "--json", "--on-incident",
             "echo from-flag >> '" + tmp.path() + "/who'"},
            env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(read_file(tmp / "who"), "from-settings\nfrom-flag\n");
    // A wrong settings file is named with its line; ingest still runs.
    write_file(tmp / "settings.toml", "[on_incident]\ntimeout_s = -1\n");
    r = run({program("msmon"), "ingest", job, "--db", tmp / "c.db"}, env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("settings: " + (tmp / "settings.toml") + " line 2: on_incident.timeout_s must be"),
              std::string::npos)
        << r.err;
    r = run({program("msmon"), "settings"}, env);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.out.find("file: " + (tmp / "settings.toml")), std::string::npos) << r.out;
}

TEST(OnIncident, usage_errors_are_named) {
    TempDir tmp;
    auto r = run({program("msmon"), "ingest", tmp.path(), "--on-incident", "  "}, isolated_env(tmp));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--on-incident needs a command"), std::string::npos) << r.err;
    r = run({program("msmon"), "ingest", tmp.path(), "--on-incident", "true", "--on-incident-timeout", "0"},
            isolated_env(tmp));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--on-incident-timeout takes seconds"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace msmon::test
