// People start msmon-tui before the job: on a folder that does not exist yet it opens, says it waits for it,
// then says what it waits for in the folder, and shows the job's ranks once the job writes them.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

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
    TmuxSession t(program("msmon-tui") + " " + job + " --db " + (tmp / "store.db"), 80, 24, tmux_env(tmp));
    // 80 columns: what it waits for is the one thing the status line must say.
    std::string screen = t.screen_when(
        [&](const std::string& s) { return s.find("waiting for " + job + " to appear") != std::string::npos; },
        TmuxSession::settle_limit());
    ASSERT_NE(screen.find("waiting for " + job + " to appear"), std::string::npos) << screen;
    // Said once: not again by the engine's notice in the room left ("'/tmp/…/job' does not exist yet: …").
    const std::string status = lines_of(screen).back();
    EXPECT_EQ(status.find("'" + job.substr(0, 4)), std::string::npos) << screen;
    fs::create_directories(job);
    screen = t.screen_when(
        [&](const std::string& s) {
            return s.find("nothing yet in " + job + ": waiting for the job's output") != std::string::npos;
        },
        TmuxSession::settle_limit());
    ASSERT_NE(screen.find("nothing yet in " + job), std::string::npos) << screen;
    fs::rename(tmp / "staged/monitor_output", job + "/monitor_output");
    // The Overview lists the job's 3 ranks (at 80 columns the status line has no room for its rank count).
    const auto ranks_listed = [](const std::string& s) {
        // A rank's row: its number, its history, then latest, min and max.
        static const std::regex row(R"(^ [0-2] +\S+ +[-+.e0-9]+ +[-+.e0-9]+ +[-+.e0-9]+$)");
        int rows = 0;
        for (const auto& line : lines_of(s)) rows += std::regex_match(line, row);
        return rows;
    };
    screen = t.screen_when([&](const std::string& s) { return ranks_listed(s) == 3; }, TmuxSession::settle_limit());
    EXPECT_EQ(ranks_listed(screen), 3) << screen;
    EXPECT_NE(screen.find("steps 0-5"), std::string::npos) << screen;
    EXPECT_EQ(screen.find("waiting for the job's output"), std::string::npos) << screen;
    t.send_keys("q", true);
}

}  // namespace
}  // namespace msmon::test
