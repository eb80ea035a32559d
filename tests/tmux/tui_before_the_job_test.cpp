// People start msmon-tui before the job: on a folder that does not exist yet it opens, says it waits for it,
// then says what it waits for in the folder, and shows the job's ranks once the job writes them.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

namespace fs = std::filesystem;

TEST(TuiBeforeTheJob, a_folder_that_appears_later_is_waited_for_said_and_then_shown) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TempDir tmp;
    const std::string job = tmp / "job";
    ASSERT_EQ(run({program("msmon"), "simulate", tmp / "staged", "--ranks", "3", "--steps", "6"}).exit_code, 0);
    TmuxSession t(program("msmon-tui") + " " + job + " --db " + (tmp / "store.db"), 140, 30, tmux_env(tmp));
    std::string screen = t.screen_when(
        [](const std::string& s) { return s.find("does not exist yet: waiting for it") != std::string::npos; },
        TmuxSession::settle_limit());
    ASSERT_NE(screen.find("does not exist yet: waiting for it"), std::string::npos) << screen;
    fs::create_directories(job);
    screen = t.screen_when(
        [](const std::string& s) { return s.find("yet: waiting for msprobe rank folders") != std::string::npos; },
        TmuxSession::settle_limit());
    ASSERT_NE(screen.find("nothing msmon reads under"), std::string::npos) << screen;
    fs::rename(tmp / "staged/monitor_output", job + "/monitor_output");
    screen = t.screen_when([](const std::string& s) { return s.find("3 ranks") != std::string::npos; },
                           TmuxSession::settle_limit());
    EXPECT_NE(screen.find("3 ranks"), std::string::npos) << screen;
    EXPECT_NE(screen.find("steps 0-5"), std::string::npos) << screen;
    EXPECT_EQ(screen.find("waiting for msprobe rank folders"), std::string::npos) << screen;
    t.send_keys("q", true);
}

}  // namespace
}  // namespace msmon::test
