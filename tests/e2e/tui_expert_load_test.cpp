// The Experts tab in a real terminal (tmux): a simulated MoE job whose router collapses onto one expert shows
// that expert flagged, with its layer's imbalance.
#include <gtest/gtest.h>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

TEST(TuiExpertLoad, planted_collapsed_expert_is_flagged) {
    if (!TmuxSession::available()) GTEST_SKIP() << "tmux is not installed";
    TempDir tmp;
    const std::string job = tmp / "job";
    auto sim = run({program("msmon"), "simulate", job, "--ranks", "2", "--steps", "16", "--params", "2", "--tensorboard",
                    "--moe-experts", "6", "--expert-collapse", "8:1:4"});
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    const std::string cmd = program("msmon-tui") + " " + job + " --db " + (tmp / "store.db");
    TmuxSession t(cmd, 100, 30,
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
    EXPECT_EQ(screen.find("layer_0 1.0") == std::string::npos && screen.find("layer_0 0.9") == std::string::npos, false) << screen;
    // k goes to layer 0, which is balanced.
    t.send_keys("k", true);
    EXPECT_FALSE(t.wait_for("balanced: max/mean", milliseconds(3000)).empty()) << t.capture();
    t.send_keys("q", true);
}

}  // namespace
}  // namespace msmon::test
