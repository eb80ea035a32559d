// The Experts tab in a real terminal (tmux): a simulated MoE job whose router collapses onto one expert shows
// that expert flagged, with its layer's imbalance.
#include <gtest/gtest.h>

#include <sstream>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

TEST(TuiExpertLoad, planted_collapsed_expert_is_flagged) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TempDir tmp;
    const std::string job = tmp / "job";
    auto sim = run({program("msmon"), "simulate", job, "--ranks", "2", "--steps", "16", "--params", "2",
                    "--tensorboard", "--moe-experts", "6", "--expert-collapse", "8:1:4"});
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    const std::string cmd = program("msmon-tui") + " " + job + " --db " + (tmp / "store.db");
    TmuxSession t(
        cmd, 100, 30,
        {{"LANG", "C.UTF-8"}, {"LC_ALL", "C.UTF-8"}, {"TERM", "xterm-256color"}, {"XDG_STATE_HOME", tmp / "state"}});
    ASSERT_FALSE(t.wait_for("6 Experts", milliseconds(8000)).empty()) << t.capture();
    t.send_keys("6", true);
    const std::string screen = t.wait_for("IMBALANCED: ep_4", milliseconds(5000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("layer_1 (2/2)"), std::string::npos) << screen;
    EXPECT_NE(screen.find("layer_1 "), std::string::npos) << screen;
    // The hottest expert heads the "now" list, marked HOT; layer 0 stays balanced (no "!").
    bool hot_line = false;
    std::size_t at = 0;
    while ((at = screen.find("ep_4 ", at)) != std::string::npos) {
        const auto eol = screen.find('\n', at);
        if (screen.substr(at, eol - at).find("HOT") != std::string::npos) hot_line = true;
        ++at;
    }
    EXPECT_TRUE(hot_line) << screen;
    EXPECT_EQ(screen.find("layer_0 1.0") == std::string::npos && screen.find("layer_0 0.9") == std::string::npos, false)
        << screen;
    // k goes to layer 0, which is balanced.
    t.send_keys("k", true);
    EXPECT_FALSE(t.wait_for("balanced: max/mean", milliseconds(3000)).empty()) << t.capture();
    t.send_keys("q", true);
}

// 300 steps on a 63-column map: the whole history is drawn (each column the max of its steps), and a step axis under
// the experts names the first, middle and last step, so the step where the collapse began can be read off.
TEST(TuiExpertLoad, the_map_holds_the_whole_history_with_a_step_axis) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TempDir tmp;
    const std::string job = tmp / "job";
    auto sim = run({program("msmon"), "simulate", job, "--ranks", "2", "--steps", "300", "--params", "2",
                    "--tensorboard", "--moe-experts", "8", "--expert-collapse", "150"});
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    ASSERT_EQ(run({program("msmon"), "ingest", job, "--db", tmp / "store.db"}).exit_code, 0);  // the whole run
    TmuxSession t(
        program("msmon-tui") + " --db " + (tmp / "store.db"), 100, 24,
        {{"LANG", "C.UTF-8"}, {"LC_ALL", "C.UTF-8"}, {"TERM", "xterm-256color"}, {"XDG_STATE_HOME", tmp / "state"}});
    ASSERT_FALSE(t.wait_for("6 Experts", milliseconds(8000)).empty()) << t.capture();
    t.send_keys("6", true);
    const std::string screen = t.wait_for("IMBALANCED", milliseconds(8000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    // The axis: the line after the experts' rows, the first step at the map's left and the last at its right.
    std::istringstream in(screen);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    std::string axis;
    for (std::size_t i = 5; i < lines.size(); ++i)
        if (lines[i].rfind("       1 ", 0) == 0) axis = lines[i];
    ASSERT_FALSE(axis.empty()) << "no step axis starting at step 1 under the map:\n" << screen;
    std::istringstream words(axis);
    std::vector<std::string> w;
    for (std::string s; words >> s;) w.push_back(s);
    ASSERT_EQ(w.size(), 3u) << axis;
    EXPECT_EQ(w.back(), "300") << axis;
    EXPECT_GT(std::stoi(w[1]), 100) << axis;
    EXPECT_LT(std::stoi(w[1]), 200) << axis;
}

}  // namespace
}  // namespace msmon::test
