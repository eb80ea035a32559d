// A new incident reaches the person at the terminal once: msmon-tui rings the bell and writes a desktop
// notification (OSC 9 and OSC 777, wrapped for tmux's passthrough inside tmux), puts the incident on the status
// line, and runs --on-incident's command with the incident's JSON. The backlog read at start (an incident that
// was already in the job's files) rings nothing. The bytes are what tmux recorded from the program (pipe-pane).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

std::size_t count_of(const std::string& haystack, const std::string& needle) {
    std::size_t n = 0;
    for (auto at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + needle.size())) ++n;
    return n;
}

std::string last_line(const std::string& screen) {
    const auto lines = lines_of(screen);
    for (auto it = lines.rbegin(); it != lines.rend(); ++it)
        if (it->find_first_not_of(' ') != std::string::npos) return *it;
    return "";
}

// Writes step `step` of grad_reduced on every rank, as the job would: the step before's rows with the step
// changed; on `nan_rank` the first tensor's norm is NaN.
void write_next_step(const std::string& job, int step, int nan_rank) {
    for (const auto& entry : std::filesystem::directory_iterator(job + "/monitor_output")) {
        const std::string folder = entry.path().string();
        const int rank = std::stoi(folder.substr(folder.rfind("-rank") + 5));
        std::istringstream in(
            read_file(folder + "/grad_reduced_" + std::to_string(step - 1) + "-" + std::to_string(step - 1) + ".csv"));
        std::string out, line;
        std::getline(in, line);
        out += line + "\n";  // vpp_stage,name,step,min,max,norm,...
        bool first = true;
        while (std::getline(in, line)) {
            std::vector<std::string> cells;
            std::string cell;
            bool quoted = false;
            for (char c : line) {
                if (c == '"') quoted = !quoted;
                if (c == ',' && !quoted) {
                    cells.push_back(cell);
                    cell.clear();
                } else {
                    cell += c;
                }
            }
            cells.push_back(cell);
            cells[2] = std::to_string(step);
            if (rank == nan_rank && first) cells[5] = "nan";
            first = false;
            for (std::size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cells[i];
            out += "\n";
        }
        const std::string name = folder + "/grad_reduced_" + std::to_string(step) + "-" + std::to_string(step) + ".csv";
        write_file(name + ".tmp", out);
        std::filesystem::rename(name + ".tmp", name);
    }
}

class TuiNotify : public ::testing::Test {
protected:
    void SetUp() override {
        if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
        // The backlog: 30 steps with a gradient spike at step 10 (an incident before msmon-tui was started).
        const auto r = run({program("msmon"), "simulate", tmp / "job", "--ranks", "4", "--params", "6", "--steps", "30",
                            "--faults", "spike@10"},
                           tmux_env(tmp));
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    TempDir tmp;
};

TEST_F(TuiNotify, a_nan_arriving_while_watching_rings_once_notifies_once_and_runs_the_command_once) {
    TmuxSession t(program("msmon-tui") + " " + (tmp / "job") + " --db " + (tmp / "s.db") + " --on-incident 'cat >> " +
                      (tmp / "runs.jsonl") + "'",
                  150, 40, tmux_env(tmp));
    const std::string raw = tmp / "raw.bin";
    t.record_output(raw);
    // Caught up, nothing waiting to settle: the spike at step 10 is the backlog, known already.
    std::string screen = t.settled(TmuxSession::Wait::timers);
    ASSERT_NE(last_line(screen).find("1 incident"), std::string::npos) << screen;
    ASSERT_NE(last_line(screen).find("steps 0-29"), std::string::npos) << screen;
    EXPECT_EQ(t.idle_point()->notified, 0u) << "the backlog's incident rang";
    EXPECT_EQ(count_of(read_file(raw), "]9;"), 0u) << "the backlog's incident rang";

    write_next_step(tmp / "job", 30, 1);
    // Announced once it has settled, 3 s after its first sight.
    screen = t.settled(TmuxSession::Wait::timers);
    ASSERT_NE(last_line(screen).find("2 incidents"), std::string::npos) << screen;
    EXPECT_NE(screen.find("new incident: norm nan in grad_reduced at step 30, rank 1"), std::string::npos) << screen;
    EXPECT_EQ(t.idle_point()->notified, 1u);
    // More data read and drawn: nothing rings again.
    write_next_step(tmp / "job", 31, -1);
    screen = t.settled(TmuxSession::Wait::timers);
    ASSERT_NE(last_line(screen).find("steps 0-31"), std::string::npos) << screen;
    EXPECT_EQ(t.idle_point()->notified, 1u) << "rang again";
    // Everything the program wrote, as tmux passed it on. Quitting waits for the --on-incident command.
    const auto output = t.output_after_quit(raw);
    ASSERT_TRUE(output) << t.last_wait_error();
    const std::string& bytes = *output;
    // Inside tmux each OSC is wrapped for passthrough, its ESC doubled.
    EXPECT_EQ(count_of(bytes, "\x1bPtmux;\x1b\x1b]9;msmon: norm nan in grad_reduced at step 30, rank 1"), 1u);
    EXPECT_EQ(count_of(bytes, "\x1bPtmux;\x1b\x1b]777;notify;msmon;norm nan in grad_reduced at step 30, rank 1"), 1u);
    EXPECT_EQ(count_of(bytes, "]9;"), 1u);
    // One bell of its own (the two OSCs end with BEL too).
    EXPECT_EQ(count_of(bytes, "\a"), 3u);

    std::istringstream runs(read_file(tmp / "runs.jsonl"));
    std::vector<nlohmann::json> incidents;
    for (std::string line; std::getline(runs, line);) incidents.push_back(nlohmann::json::parse(line));
    ASSERT_EQ(incidents.size(), 1u);
    EXPECT_EQ(incidents[0]["step"], 30);
    EXPECT_EQ(incidents[0]["rank"], 1);
    EXPECT_EQ(incidents[0]["kind"], "grad_reduced");
}

// Opening a finished run is no news: sdc-grad's replica divergence (step 22, rank 3) is judged once its window has
// its steps, on the idle timer after the catch-up, and it rang the bell and said "new incident" on every opening.
// Findings about steps every rank had written when reading caught up are the backlog, however late they are judged.
TEST_F(TuiNotify, opening_a_finished_run_whose_replica_finding_is_judged_after_the_catch_up_rings_nothing) {
    const std::string shared = shared_dir();
    if (shared.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: no msprobe-faults fixtures");
    TmuxSession t(program("msmon-tui") + " " + shared + "/fixtures/msprobe-faults/sdc-grad --db " + (tmp / "g.db") +
                      " --on-incident 'cat >> " + (tmp / "runs.jsonl") + "'",
                  150, 40, tmux_env(tmp));
    std::string screen = t.settled(TmuxSession::Wait::timers);
    ASSERT_NE(last_line(screen).find("2 incidents"), std::string::npos) << screen;
    EXPECT_EQ(screen.find("new incident"), std::string::npos) << screen;
    EXPECT_EQ(t.idle_point()->notified, 0u) << "the backlog's incident rang";
    t.send_keys("3");
    screen = t.settled();
    EXPECT_NE(screen.find("ReplicaDivergence"), std::string::npos) << screen;
    EXPECT_FALSE(std::filesystem::exists(tmp / "runs.jsonl")) << read_file(tmp / "runs.jsonl");
}

// An --on-incident command that fails was said only in msmon.log: the person at the terminal never knew that the
// pager was not paged. Said on the status line, beside the new incident's notice.
TEST_F(TuiNotify, a_command_that_fails_is_said_on_the_status_line_beside_the_incident) {
    TmuxSession t(program("msmon-tui") + " " + (tmp / "job") + " --db " + (tmp / "s.db") + " --on-incident 'exit 3'",
                  220, 40, tmux_env(tmp));
    std::string screen = t.settled(TmuxSession::Wait::timers);
    ASSERT_NE(last_line(screen).find("1 incident"), std::string::npos) << screen;
    write_next_step(tmp / "job", 30, 1);
    screen = t.wait_for("--on-incident command exited with status 3", milliseconds(30000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(last_line(screen).find("new incident: norm nan in grad_reduced at step 30, rank 1; --on-incident command "
                                     "exited with status 3"),
              std::string::npos)
        << screen;
}

// The bell off by its flag, the desktop notification off in msmon's settings file: nothing is written, and the
// status line still says it.
TEST_F(TuiNotify, no_bell_and_no_notify_write_nothing_but_the_status_line_still_says_it) {
    std::filesystem::create_directories(tmp / "config/msmon");
    write_file(tmp / "config/msmon/config.toml", "[notify]\ndesktop = false\n");
    TmuxSession t(program("msmon-tui") + " " + (tmp / "job") + " --db " + (tmp / "s.db") + " --no-bell", 150, 40,
                  tmux_env(tmp));
    const std::string raw = tmp / "raw.bin";
    t.record_output(raw);
    const std::string backlog = t.settled(TmuxSession::Wait::timers);
    ASSERT_NE(last_line(backlog).find("1 incident"), std::string::npos) << backlog;
    ASSERT_NE(last_line(backlog).find("steps 0-29"), std::string::npos) << backlog;
    write_next_step(tmp / "job", 30, 2);
    const std::string screen = t.settled(TmuxSession::Wait::timers);
    EXPECT_NE(screen.find("new incident: norm nan in grad_reduced at step 30, rank 2"), std::string::npos) << screen;
    EXPECT_EQ(t.idle_point()->notified, 0u);
    // Everything the program wrote, as tmux passed it on.
    const auto output = t.output_after_quit(raw);
    ASSERT_TRUE(output) << t.last_wait_error();
    const std::string& bytes = *output;
    EXPECT_EQ(count_of(bytes, "]9;"), 0u);
    EXPECT_EQ(count_of(bytes, "\a"), 0u);
}

// The notice is said for 20 s, then the status line is whole again: how long ago data came, values/s, the incident
// count (the Anomalies tab keeps the incident). A job that stops after its incident must look stopped.
TEST_F(TuiNotify, the_new_incident_notice_clears_and_the_line_shows_the_data_age_and_rate_again) {
    TmuxSession t(program("msmon-tui") + " " + (tmp / "job") + " --db " + (tmp / "s.db") + " --no-bell", 150, 40,
                  tmux_env(tmp));
    const std::string backlog = t.settled(TmuxSession::Wait::timers);
    ASSERT_NE(last_line(backlog).find("steps 0-29"), std::string::npos) << backlog;
    write_next_step(tmp / "job", 30, 1);
    std::string screen = t.settled(TmuxSession::Wait::timers);
    ASSERT_NE(last_line(screen).find("new incident: norm nan in grad_reduced at step 30, rank 1"), std::string::npos)
        << screen;
    ASSERT_NE(t.idle_point()->notice, -1) << "the idle report says no notice shows";
    // Nothing else happens: the job stopped after its NaN.
    const auto cleared = [](const std::string& s) { return last_line(s).find("new incident") == std::string::npos; };
    screen = t.screen_when(cleared, std::max(TmuxSession::settle_limit(), milliseconds(45000)));
    ASSERT_TRUE(cleared(screen)) << "the notice never cleared:\n" << screen;
    const std::string status = last_line(screen);
    EXPECT_NE(status.find("2 incidents"), std::string::npos) << status;
    EXPECT_NE(status.find("s ago"), std::string::npos) << "the data's age is not back: " << status;
    EXPECT_NE(status.find("values/s"), std::string::npos) << "the rate is not back: " << status;
    EXPECT_EQ(t.idle_point()->notice, -1) << "the idle report still says a notice shows";
}

}  // namespace
}  // namespace msmon::test
