// Views that follow a live job: real msprobe runs (../shared/fixtures/msprobe-faults) replayed step by step while
// msmon-tui watches. The Overview's default statistic is a rule of the data, not of the moment the job was first
// read; the Layers tab's window follows the newest step and keeps the incident's origin in view.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "tests/support/run_replay.hpp"
#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

std::string line_with(const std::string& screen, const std::string& text) {
    for (const auto& line : lines_of(screen))
        if (line.find(text) != std::string::npos) return line;
    return {};
}

// Activations are collected first (xy_distribution alone), gradients from step 10 (the config edited): the
// Overview opens on the activations' norm, moves to the reduced gradients' norm when they arrive, and shows what a
// second msmon-tui opened afterwards shows. A statistic the user picks stays.
TEST(TuiLiveViews, the_overview_default_follows_the_data_and_matches_a_run_opened_afterwards) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    if (shared_dir().empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: no real msprobe run to replay");
    TempDir tmp;
    const std::string source = shared_dir() + "/fixtures/msprobe-faults/healthy/monitor_output";
    const std::string output = tmp / "job/monitor_output";
    std::filesystem::create_directories(output);
    TmuxSession t(program("msmon-tui") + " " + (tmp / "job") + " --db " + (tmp / "a.db"), 140, 30, tmux_env(tmp));
    ReplayPlan plan;
    plan.step_time = milliseconds(150);
    plan.collections = {{0, 9}};
    plan.keep = [](const std::string& file, std::int64_t) { return file.rfind("actv", 0) == 0; };
    replay_msprobe_run(source, output, plan);
    const std::string default_actv = "history: L2 of the tensors' norms (the default)";
    std::string screen = t.screen_when(
        [&](const std::string& s) {
            return s.find("kind actv  op norm") != std::string::npos && s.find(default_actv) != std::string::npos;
        },
        TmuxSession::settle_limit());
    ASSERT_NE(screen.find("kind actv  op norm"), std::string::npos) << screen;
    ASSERT_NE(screen.find(default_actv), std::string::npos) << screen;
    plan.collections = {{10, 29}};
    plan.keep = nullptr;
    replay_msprobe_run(source, output, plan);
    const std::string default_grad = "kind grad_reduced  op norm";
    screen = t.screen_when(
        [&](const std::string& s) {
            return s.find(default_grad) != std::string::npos && s.find("steps 0-29") != std::string::npos;
        },
        TmuxSession::settle_limit());
    ASSERT_NE(screen.find(default_grad), std::string::npos) << screen;
    // Every file written handled and drawn: the first frame that says "steps 0-29" can still show the gradients
    // read to step 28 on some ranks (seen under CI's ThreadSanitizer).
    screen = t.settled();
    EXPECT_NE(screen.find("history: L2 of the tensors' norms (the default)"), std::string::npos) << screen;
    // The same job opened afterwards, once it has read everything.
    TmuxSession later(program("msmon-tui") + " " + (tmp / "job") + " --db " + (tmp / "b.db"), 140, 30, tmux_env(tmp));
    later.wait_for("steps 0-29", TmuxSession::settle_limit());
    const std::string again = later.settled();
    EXPECT_EQ(line_with(again, "kind "), line_with(screen, "kind ")) << again << screen;
    EXPECT_EQ(line_with(again, "history"), line_with(screen, "history")) << again << screen;
    later.send_keys("q", true);
    // Picked: o (the next op) stays, and the title no longer says default.
    t.send_keys("o", true);
    screen = t.settled();
    EXPECT_NE(screen.find("kind grad_reduced  op mean"), std::string::npos) << screen;
    EXPECT_NE(screen.find("history: averaged over tensors"), std::string::npos) << screen;
    EXPECT_EQ(screen.find("(the default)"), std::string::npos) << screen;
    t.send_keys("q", true);
}

// The NaN run (rank 3's layers.0.fc2 output at step 11) replayed live: the Layers tab, opened while the job is a
// few steps past the NaN, follows the job to its last step, 49, with the origin still in view and under the cursor.
TEST(TuiLiveViews, the_layers_window_follows_the_newest_step_and_keeps_the_origin_in_view) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    if (shared_dir().empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: no real msprobe run to replay");
    TempDir tmp;
    const std::string source = shared_dir() + "/fixtures/msprobe-faults/nan/monitor_output";
    const std::string output = tmp / "job/monitor_output";
    std::filesystem::create_directories(output);
    TmuxSession t(program("msmon-tui") + " " + (tmp / "job") + " --db " + (tmp / "s.db"), 120, 40, tmux_env(tmp));
    ReplayPlan plan;
    plan.step_time = milliseconds(200);
    plan.lag[1] = milliseconds(100);
    plan.collections = {{0, 15}};
    replay_msprobe_run(source, output, plan);
    t.send_keys("7", true);
    std::string screen = t.wait_for("step 11, rank 3, module.layers.0.fc2.output", TmuxSession::settle_limit());
    ASSERT_FALSE(screen.empty()) << t.capture();
    plan.collections = {{16, 49}};
    replay_msprobe_run(source, output, plan);
    screen = t.screen_when(
        [](const std::string& s) {
            return s.find("-49") != std::string::npos && s.find("step 11, rank 3, ") != std::string::npos;
        },
        TmuxSession::settle_limit());
    const std::string title = line_with(screen, "rank 3  kind ");
    ASSERT_FALSE(title.empty()) << screen;
    EXPECT_NE(title.find("-49"), std::string::npos) << "the window did not follow the job to step 49:\n" << screen;
    EXPECT_NE(screen.find("step 11, rank 3, module.layers.0.fc2.output"), std::string::npos) << screen;
    t.send_keys("q", true);
}

}  // namespace
}  // namespace msmon::test
