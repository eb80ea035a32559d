// The stall gauge across an agent restart: a rank that stopped writing keeps counting its seconds since its last
// step from when the step arrived, not from when the new agent started (the previous msmon.prom says when).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "core/export/prom_textfile.hpp"
#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

// rank 0's msmon_rank_seconds_since_last_step in the file, or -1.
double seconds_since_step(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return -1;
    const std::string text = read_file(path);
    std::smatch m;
    static const std::regex re(R"re(msmon_rank_seconds_since_last_step\{[^}]*rank="0"\} ([0-9.e+-]+))re");
    return std::regex_search(text, m, re) ? std::stod(m[1]) : -1;
}

double wait_for_gauge(const std::string& path, double at_least, std::chrono::seconds limit) {
    double s = -1;
    wait_until(
        [&] {
            s = seconds_since_step(path);
            return s >= at_least;
        },
        limit);
    return s;
}

TEST(PromRestart, a_restarted_agent_keeps_counting_a_stalled_rank_from_its_last_step) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    std::filesystem::create_directories(tmp / "prom");
    Background sim({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--steps", "3", "--params", "2"},
                   tmp.path(), env);
    ASSERT_EQ(sim.wait(std::chrono::seconds(60)), 0) << sim.err();
    const std::vector<std::string> agent = {
        program("msmon"),  "ingest",     tmp / "job", "--follow", "--db",   tmp / "store.db",
        "--prom-textfile", tmp / "prom", "--job",     "j1",       "--node", "n1"};
    const std::string prom = tmp / "prom/msmon.prom";
    {
        Background first(agent, tmp.path(), env);
        // The run is over: its last step is as old as the agent. Let the stall grow to 3 s, then crash the agent.
        ASSERT_GE(wait_for_gauge(prom, 3.0, std::chrono::seconds(30)), 3.0) << read_file(prom);
        first.signal(SIGKILL);
        first.wait(std::chrono::seconds(10));
    }
    const double before = seconds_since_step(prom);
    std::this_thread::sleep_for(std::chrono::seconds(1));  // paces the input: 1 s of downtime, which the stall counts
    Background second(agent, tmp.path(), env);
    // The new agent's first file: the stall goes on from `before` plus the downtime, not from 0.
    const auto written = std::filesystem::last_write_time(prom);
    ASSERT_GE(
        wait_until([&] { return std::filesystem::last_write_time(prom) != written; }, std::chrono::seconds(30)).count(),
        0)
        << "the new agent never wrote " << prom << "; stderr: " << second.err();
    const double after = seconds_since_step(prom);
    EXPECT_GE(after, before + 1.0) << "before the restart " << before << " s; the new agent's first file says "
                                   << after;
    EXPECT_LT(after, before + 30.0);
}

TEST(PromRestart, step_times_are_read_back_only_for_the_same_job_and_node) {
    JobGauges g;
    g.job = "j\"1";
    g.node = "n1";
    g.updated_unix_seconds = 1000.5;
    RankGauges r0;
    r0.rank = 0, r0.last_step = 41, r0.seconds_since_step = 12.25;
    RankGauges r7;
    r7.rank = 7, r7.last_step = 40;  // no stall gauge: not read back
    g.ranks = {r0, r7};
    const auto seen = read_step_times(render_prom_text(g), "j\"1", "n1");
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen.at(0).step, 41);
    EXPECT_DOUBLE_EQ(seen.at(0).unix_seconds, 1000.5 - 12.25);
    EXPECT_TRUE(read_step_times(render_prom_text(g), "j\"1", "n2").empty());
    EXPECT_TRUE(read_step_times(render_prom_text(g), "j1", "n1").empty());
    EXPECT_TRUE(read_step_times("garbage\n{}\nmsmon_rank_last_step{ 3\n", "j1", "n1").empty());
}

// The previous msmon.prom is read back on a restart, in a folder node_exporter's user may share: a FIFO there hung
// --prom-textfile before anything was read, and a link to /dev/zero grew memory until std::bad_alloc. Neither is
// read now; each is named on stderr, and the ingest goes on (the file is only a hint).
TEST(PromRestart, a_fifo_or_a_link_to_dev_zero_as_the_previous_prom_file_is_named_and_not_read) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const auto sim =
        run({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--steps", "3", "--params", "2"}, env);
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    std::filesystem::create_directories(tmp / "fifo");
    ASSERT_EQ(::mkfifo((tmp / "fifo/msmon.prom").c_str(), 0644), 0);
    std::filesystem::create_directories(tmp / "zero");
    std::filesystem::create_symlink("/dev/zero", tmp / "zero/msmon.prom");
    for (const auto& [dir, named] : {std::pair<std::string, std::string>{"fifo", "is a FIFO, not a regular file"},
                                     {"zero", "is a symbolic link: msmon does not read through it"}}) {
        Background ingest({program("msmon"), "ingest", tmp / "job", "--db", tmp / (dir + ".db"), "--prom-textfile",
                           tmp / dir, "--job", "j1", "--node", "n1"},
                          tmp.path(), env);
        ASSERT_EQ(ingest.wait(std::chrono::seconds(30)), 0) << dir << ": " << ingest.err();
        EXPECT_NE(ingest.err().find((tmp / dir) + "/msmon.prom " + named), std::string::npos) << ingest.err();
        // Written anew in its place (the link replaced, never written through).
        EXPECT_NE(read_file(tmp / dir + "/msmon.prom").find("msmon_rank_last_step"), std::string::npos);
    }
}

// Gauges that cannot be written (their folder removed under a running agent) were said only in msmon.log, and the
// ingest exited 0 with nothing on stderr: node_exporter went on serving a stale file. Said on stderr when writes
// start failing and when they work again, and counted in --json.
TEST(PromRestart, a_failed_gauge_write_is_said_on_stderr_and_counted_in_json) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const auto sim =
        run({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--steps", "3", "--params", "2"}, env);
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    std::filesystem::create_directories(tmp / "prom");
    Background agent({program("msmon"), "ingest", tmp / "job", "--follow", "--json", "--db", tmp / "store.db",
                      "--prom-textfile", tmp / "prom", "--job", "j1", "--node", "n1"},
                     tmp.path(), env);
    ASSERT_GE(
        wait_until([&] { return std::filesystem::exists(tmp / "prom/msmon.prom"); }, std::chrono::seconds(30)).count(),
        0)
        << agent.err();
    std::filesystem::remove_all(tmp / "prom");
    ASSERT_GE(
        wait_until([&] { return agent.err().find("--prom-textfile:") != std::string::npos; }, std::chrono::seconds(20))
            .count(),
        0)
        << agent.err();
    EXPECT_NE(agent.err().find("(the gauges are not written)"), std::string::npos) << agent.err();
    std::filesystem::create_directories(tmp / "prom");
    ASSERT_GE(
        wait_until([&] { return agent.err().find("written again") != std::string::npos; }, std::chrono::seconds(20))
            .count(),
        0)
        << agent.err();
    agent.signal(SIGTERM);
    ASSERT_EQ(agent.wait(std::chrono::seconds(20)), 0) << agent.err();
    const auto summary = nlohmann::json::parse(agent.out());
    EXPECT_GE(summary.at("prom_textfile").at("failed_writes").get<int>(), 1) << agent.out();
    EXPECT_EQ(summary.at("prom_textfile").at("error"), "") << "the last write worked: " << agent.out();
}

}  // namespace
}  // namespace msmon::test
