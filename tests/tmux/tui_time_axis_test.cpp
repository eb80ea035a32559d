// The Chart's x axis in time: a job whose files were written a second apart, with a 60 s pause planted between
// steps 49 and 50 (the files' mtimes: msmon reads a backlog's times from them). On the wall-clock axis the pause
// is clipped and marked (≈ on the axis, named in the title); the cursor reads out step and time; the time since
// the first step counts the pause whole.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <regex>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

constexpr std::int64_t kStart = 1700000000;  // 2023-11-14 22:13:20 UTC

TEST(TuiTimeAxis, the_wall_clock_axis_clips_a_planted_60_s_pause_and_reads_out_step_and_time) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TempDir tmp;
    auto env = tmux_env(tmp);
    env["TZ"] = "UTC";
    const auto r =
        run({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--params", "4", "--steps", "100"}, env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Step s written at kStart + s seconds, and 60 s more from step 50 on.
    const std::regex steps(R"(_(\d+)-(\d+)\.csv$)");
    int files = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(tmp / "job/monitor_output")) {
        std::smatch m;
        const std::string name = e.path().filename().string();
        if (!std::regex_search(name, m, steps)) continue;
        const std::int64_t step = std::stoll(m[2]);
        const std::int64_t when = kStart + step + (step >= 50 ? 60 : 0);
        const timespec at[2] = {{static_cast<time_t>(when), 0}, {static_cast<time_t>(when), 0}};
        ASSERT_EQ(::utimensat(AT_FDCWD, e.path().c_str(), at, 0), 0) << e.path();
        ++files;
    }
    ASSERT_GT(files, 100);

    // The settings file opens the Chart on the wall clock.
    std::filesystem::create_directories(tmp / "config/msmon");
    // It also moves the x-axis key from w to W, and asks for a move it must refuse.
    write_file(tmp / "config/msmon/config.json",
               "{\"x_axis\": \"wall\", \"keys\": {\"chart:w\": \"W\", \"chart:Z\": \"z\"}}");
    TmuxSession t(program("msmon-tui") + " " + (tmp / "job") + " --db " + (tmp / "s.db"), 150, 40, env);
    const auto ready = [](const std::string& s) {
        const auto lines = lines_of(s);
        return !lines.empty() && lines.back().find("steps 0-99") != std::string::npos;
    };
    ASSERT_TRUE(ready(t.screen_when(ready, milliseconds(30000)))) << t.capture();
    t.send_keys("2", true);
    std::string screen =
        t.screen_when([](const std::string& s) { return s.find("wall clock, a pause clipped") != std::string::npos; },
                      milliseconds(10000));
    ASSERT_NE(screen.find("wall clock, a pause clipped (\u2248): 61s after step 49"), std::string::npos) << screen;
    const auto lines = lines_of(screen);
    bool marked = false, first_label = false;
    for (const auto& l : lines) {
        marked = marked || (l.find("\u2514") != std::string::npos && l.find("\u2248") != std::string::npos);
        first_label = first_label || l.find("22:13:20") != std::string::npos;
    }
    EXPECT_TRUE(marked) << "the pause is marked on the axis line:\n" << screen;
    EXPECT_TRUE(first_label) << "the axis is labelled in wall-clock time:\n" << screen;

    EXPECT_NE(screen.find("settings: keys.chart:Z: no key 'Z' to move there"), std::string::npos)
        << "the refused override is said on the status line:\n"
        << screen;
    for (int i = 0; i < 3; ++i) t.send_keys(",", true);
    screen =
        t.screen_when([](const std::string& s) { return s.find("step 96 ") != std::string::npos; }, milliseconds(5000));
    EXPECT_NE(screen.find("step 96 22:15:56: rank 0="), std::string::npos) << screen;
    t.send_keys("w", true);  // moved away by the settings: nothing happens
    EXPECT_NE(t.settled().find("wall clock, a pause clipped"), std::string::npos) << "w still moved the axis";
    t.send_keys("W", true);
    screen =
        t.screen_when([](const std::string& s) { return s.find("time since the first step") != std::string::npos; },
                      milliseconds(5000));
    EXPECT_NE(screen.find("step 96 +2m36s: rank 0="), std::string::npos) << "the pause counted whole:\n" << screen;
    t.send_keys("W", true);  // steps again
    screen = t.screen_when([](const std::string& s) { return s.find("step 96: rank 0=") != std::string::npos; },
                           milliseconds(5000));
    EXPECT_EQ(screen.find("pause"), std::string::npos) << screen;
    t.send_keys("q", true);
}

}  // namespace
}  // namespace msmon::test
