// The TUI on a job folder another user planted FIFOs in: `health_ckpts.json` and the monitor config given with
// --config are FIFOs. A plain open blocked on them: the TUI stopped updating, ignored q and Ctrl-C, and only
// SIGKILL ended it. The user sees the ranks, the Config tab names the FIFO, the status line
// counts the file not read, and q ends the program.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

TEST(TuiHostileFiles, fifos_as_the_health_file_and_the_config_are_named_and_q_still_quits) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TempDir tmp;
    const auto sim =
        run({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--steps", "5"}, isolated_env(tmp));
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    std::filesystem::create_directories(tmp / "job/output");
    ASSERT_EQ(::mkfifo((tmp / "job/output/health_ckpts.json").c_str(), 0644), 0);
    ASSERT_EQ(::mkfifo((tmp / "config.json").c_str(), 0644), 0);
    TmuxSession t(program("msmon-tui") + " " + (tmp / "job") + " --config " + (tmp / "config.json"), 150, 40,
                  tmux_env(tmp));
    std::string screen = t.wait_for("1 malformed", milliseconds(30000));
    ASSERT_FALSE(screen.empty()) << "the FIFO is not counted as a file not read:\n" << t.capture();
    EXPECT_NE(screen.find("2 ranks"), std::string::npos) << screen;
    // The Health tab said "health_ckpts.json not found yet" of a file it had found and could not read.
    t.send_keys("4");
    screen = t.wait_for("none read: " + (tmp / "job/output/health_ckpts.json") + " not read: it is a FIFO",
                        milliseconds(20000));
    EXPECT_FALSE(screen.empty()) << t.capture();
    t.send_keys("5");
    screen = t.wait_for("is a FIFO, not a regular file", milliseconds(20000));
    EXPECT_FALSE(screen.empty()) << t.capture();
    t.send_keys("q");
    EXPECT_TRUE(t.wait_exit()) << "q did not end msmon-tui:\n" << t.capture();
}

// A watched config replaced by a FIFO (renamed over it) froze the TUI. The Config tab says the file changed and
// what it is now, and the TUI goes on.
TEST(TuiHostileFiles, a_watched_config_replaced_by_a_fifo_is_named_and_the_tui_goes_on) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TempDir tmp;
    const auto sim =
        run({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--steps", "5"}, isolated_env(tmp));
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    write_file(tmp / "config.json",
               R"({"targets": {}, "dynamic_on": false, "collect_times": 1, "format": "csv", "ops": ["norm"]})");
    TmuxSession t(program("msmon-tui") + " " + (tmp / "job") + " --config " + (tmp / "config.json"), 150, 40,
                  tmux_env(tmp));
    ASSERT_FALSE(t.wait_for("2 ranks", milliseconds(30000)).empty()) << t.capture();
    t.send_keys("5");
    ASSERT_FALSE(t.wait_for("msprobe accepts this version", milliseconds(20000)).empty()) << t.capture();
    ASSERT_EQ(::mkfifo((tmp / "planted").c_str(), 0644), 0);
    std::filesystem::rename(tmp / "planted", tmp / "config.json");
    EXPECT_FALSE(
        t.wait_for("the file changed and cannot be read: " + (tmp / "config.json") + " is a FIFO, not a regular file",
                   milliseconds(20000))
            .empty())
        << t.capture();
    t.send_keys("1");
    EXPECT_FALSE(t.wait_for("rank   history", milliseconds(20000)).empty()) << "the TUI froze:\n" << t.capture();
    t.send_keys("q");
    EXPECT_TRUE(t.wait_exit()) << "q did not end msmon-tui:\n" << t.capture();
}

}  // namespace
}  // namespace msmon::test
