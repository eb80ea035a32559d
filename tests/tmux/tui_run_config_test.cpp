// The run's config in a real terminal (tmux): a simulated job with TensorBoard event files shows the config
// MindFormers wrote as text summaries on the Health tab's run-config page (c), listed in the view's help.
#include <gtest/gtest.h>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

TEST(TuiRunConfig, health_tab_shows_the_config_from_text_summaries) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TempDir tmp;
    const std::string job = tmp / "job";
    auto sim = run({program("msmon"), "simulate", job, "--ranks", "2", "--steps", "6", "--params", "2", "--tensorboard",
                    "--moe-experts", "6"});
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    const std::string cmd = program("msmon-tui") + " " + job + " --db " + (tmp / "store.db");
    TmuxSession t(
        cmd, 100, 30,
        {{"LANG", "C.UTF-8"}, {"LC_ALL", "C.UTF-8"}, {"TERM", "xterm-256color"}, {"XDG_STATE_HOME", tmp / "state"}});
    ASSERT_FALSE(t.wait_for("4 Health", milliseconds(8000)).empty()) << t.capture();
    t.send_keys("4", true);
    // 5 keys, written by each of 2 ranks; the Health page points to them and its hint bar names the key.
    std::string screen =
        t.wait_for("run config: 5 keys from text summaries, the same on 2 ranks (c shows them)", milliseconds(8000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("c run config"), std::string::npos) << screen;
    // TensorBoard's "loss vs samples" twins count samples (step x batch): not taken for steps.
    EXPECT_NE(screen.find("steps 0-6 |"), std::string::npos) << screen;
    EXPECT_NE(screen.find("last step 6 "), std::string::npos) << screen;
    t.send_keys("?", true);
    screen = t.wait_for("run config (what the job wrote as text summaries", milliseconds(3000));
    EXPECT_FALSE(screen.empty()) << t.capture();
    t.send_keys("?", true);
    t.send_keys("c", true);
    screen = t.wait_for("moe_config.expert_num: 6", milliseconds(5000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("run config: 10 text summaries from 2 ranks, 1 config"), std::string::npos) << screen;
    EXPECT_NE(screen.find("ranks 0-1 (2, the same config)"), std::string::npos) << screen;
    EXPECT_NE(screen.find("run_mode: train"), std::string::npos) << screen;
    EXPECT_NE(screen.find("parallel_config.pipeline_stage: 2"), std::string::npos) << screen;
    EXPECT_NE(screen.find("runner_config.epochs: "), std::string::npos) << screen;
    // Esc goes back to the health page.
    t.send_keys("Escape");
    EXPECT_FALSE(t.wait_for("(c shows them)", milliseconds(3000)).empty()) << t.capture();
    t.send_keys("q", true);
}

}  // namespace
}  // namespace msmon::test
