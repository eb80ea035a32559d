// A job that restarts, as the person at the terminal sees it: the Chart's line is the run that counts, the stretch
// the restart trained again drawn faint and read out beside it only where it has values, for msprobe's tensors
// (new run folders) and MindFormers' loss (the relaunch appends to the same log) alike; Health lists the restart
// once, with the step it resumed at, the step it had reached and the checkpoint; `msmon health` and `msmon query`
// say the same.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

class TuiRestart : public ::testing::Test {
protected:
    void SetUp() override {
        // The job dies after step 45 and is relaunched from the step-40 checkpoint: msprobe writes new run
        // folders from step 41, MindFormers appends to its logs, both train 41-45 again.
        const auto r = run({program("msmon"), "simulate", tmp / "job", "--ranks", "4", "--params", "6", "--steps", "60",
                            "--logs", "--health", "--restart-at", "45"},
                           tmux_env(tmp));
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    TempDir tmp;
};

TEST_F(TuiRestart, the_chart_shows_two_segments_and_health_lists_the_restart) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TmuxSession t(program("msmon-tui") + " " + (tmp / "job") + " --db " + (tmp / "s.db"), 200, 40, tmux_env(tmp));
    // Caught up: msprobe's steps 0-59 and MindFormers' log, whose steps count from 1, to 60.
    ASSERT_TRUE(t.settle()) << t.last_wait_error() << "\n" << t.capture();
    ASSERT_NE(lines_of(t.capture()).back().find("steps 0-60"), std::string::npos) << t.capture();

    // Chart: grad_reduced norm of rank 0 (the Overview's default is MindFormers' global norm: picked by name); the
    // title says what was trained again.
    t.send_keys(":", true);
    t.send_keys("kind grad_reduced", true);
    t.send_keys("Enter");
    t.send_keys("2", true);
    std::string screen =
        t.screen_when([](const std::string& s) { return s.find("restart: 41-45 trained again") != std::string::npos; },
                      milliseconds(10000));
    ASSERT_NE(screen.find("restart: 41-45 trained again"), std::string::npos) << screen;
    const auto styled = t.capture_styled();
    bool faint_legend = false;
    for (const auto& line : styled_runs(styled, Sgr::dim))
        for (const auto& run : line) faint_legend = faint_legend || run.find("rank 0 abandoned") != std::string::npos;
    EXPECT_TRUE(faint_legend) << "the abandoned stretch is not in the legend, faint:\n" << plain_text(styled);

    // The cursor from the last step back to 44: both runs' values; at 47, past the stretch, only the line's.
    for (int i = 0; i < 15; ++i) t.send_keys(",", true);
    screen =
        t.screen_when([](const std::string& s) { return s.find("step 44:") != std::string::npos; }, milliseconds(5000));
    ASSERT_NE(screen.find("step 44: rank 0="), std::string::npos) << screen;
    EXPECT_NE(screen.find(" rank 0 abandoned="), std::string::npos) << screen;
    for (int i = 0; i < 3; ++i) t.send_keys(".", true);
    screen =
        t.screen_when([](const std::string& s) { return s.find("step 47:") != std::string::npos; }, milliseconds(5000));
    ASSERT_NE(screen.find("step 47: rank 0="), std::string::npos) << screen;
    EXPECT_EQ(screen.find(" rank 0 abandoned="), std::string::npos) << screen;

    // MindFormers' loss on rank 3 (the last pipeline stage logs it): the relaunch appended to the same log, and
    // its steps are a segment of their own, the first launch's 41-45 drawn faint.
    t.send_keys(":", true);
    t.send_keys("kind loss", true);
    t.send_keys("Enter");
    // Only the last stage (ranks 2-3) logs a loss: rank 0 says so; `r` steps through the ranks that have one,
    // each drawn with its own stretch before the next key.
    screen = t.screen_when([](const std::string& s) { return s.find("rank 0: no values") != std::string::npos; },
                           milliseconds(10000));
    ASSERT_NE(screen.find("rank 0: no values"), std::string::npos) << screen;
    for (int press = 0; press < 3 && screen.find("\nrank 3 ") == std::string::npos; ++press) {
        t.send_keys("r", true);
        screen = t.settled();
    }
    ASSERT_NE(screen.find("\nrank 3 "), std::string::npos) << screen;
    screen = t.screen_when(
        [](const std::string& s) {
            return s.find("loss") != std::string::npos && s.find("rank 3 abandoned") != std::string::npos &&
                   s.find("restart: 41-45 trained again") != std::string::npos;
        },
        milliseconds(10000));
    EXPECT_NE(screen.find("rank 3 abandoned"), std::string::npos) << screen;
    EXPECT_NE(screen.find("restart: 41-45 trained again"), std::string::npos) << screen;

    // Health: the restart, where it resumed, where the job had got to, and the checkpoint it resumed from.
    t.send_keys("4", true);
    screen = t.screen_when([](const std::string& s) { return s.find("restarts: 1") != std::string::npos; },
                           milliseconds(10000));
    EXPECT_NE(screen.find("restarts: 1"), std::string::npos) << screen;
    EXPECT_NE(screen.find("ranks 0-3 resumed at step 41 after step 45 (steps 41-45 trained twice), from checkpoint "
                          "llama3_1_8b_rank_0-40_1.safetensors (step 40)"),
              std::string::npos)
        << screen;
    t.send_keys("q", true);
}

TEST_F(TuiRestart, msmon_health_lists_the_restart_in_text_and_json) {
    const auto ingest = run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "s.db"}, tmux_env(tmp));
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    auto r = run({program("msmon"), "health", "--db", tmp / "s.db"}, tmux_env(tmp));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("restarts (1):\n  restart 1 at "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(": ranks 0-3 resumed at step 41 after step 45 (steps 41-45 trained twice)"), std::string::npos)
        << r.out;
    r = run({program("msmon"), "health", "--db", tmp / "s.db", "--format", "json"}, tmux_env(tmp));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["restarts"].size(), 1u) << r.out;
    EXPECT_EQ(j["restarts"][0]["source"], "runs");
    EXPECT_EQ(j["restarts"][0]["resumed_at"], 41);
    EXPECT_EQ(j["restarts"][0]["reached"], 45);
    EXPECT_EQ(j["restarts"][0]["ranks"], nlohmann::json({0, 1, 2, 3}));
    EXPECT_EQ(j["restarts"][0]["checkpoint"], "llama3_1_8b_rank_0-40_1.safetensors");

    // `msmon query`: a step trained twice prints the value that counts, the relaunch's; --all-runs prints both,
    // the abandoned one first. Rank 3 is on the last pipeline stage: it logs the loss.
    r = run({program("msmon"), "query", "--db", tmp / "s.db", "--kind", "loss", "--rank", "3", "--steps", "44-46"},
            tmux_env(tmp));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto counted = lines_of(r.out);
    ASSERT_EQ(counted.size(), 4u) << r.out;
    EXPECT_NE(r.err.find("left out 2 values a restart abandoned"), std::string::npos) << r.err;
    auto all = run({program("msmon"), "query", "--db", tmp / "s.db", "--kind", "loss", "--rank", "3", "--steps",
                    "44-46", "--all-runs"},
                   tmux_env(tmp));
    ASSERT_EQ(all.exit_code, 0) << all.err;
    const auto every = lines_of(all.out);
    ASSERT_EQ(every.size(), 6u) << all.out;
    EXPECT_EQ(every[1].substr(0, every[1].rfind(',')), "3,loss,,,44,,value");
    EXPECT_EQ(every[3].substr(0, every[3].rfind(',')), "3,loss,,,44,,value");
    EXPECT_EQ(every[3], counted[1]) << "the later run's value is the one that counts";
    EXPECT_NE(every[1], every[3]) << "the relaunch trained step 44 again: a new value";
}

}  // namespace
}  // namespace msmon::test
