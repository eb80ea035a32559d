// The anomalies and health views in a real terminal: msprobe's alert fixture (sort, filter, drill into the
// chart and back) and MindFormers' rendered health fixture; both at 80×24 and in ASCII.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;
namespace fs = std::filesystem;

std::string selected_line(const std::string& screen) {
    std::istringstream in(screen);
    for (std::string l; std::getline(in, l);)
        if (l.rfind(">", 0) == 0) return l;
    return "";
}

// The selected line with its row on the screen: it changes on every move of the selection.
std::string selected_row(const std::string& screen) {
    std::istringstream in(screen);
    int row = 0;
    for (std::string l; std::getline(in, l); ++row)
        if (l.rfind(">", 0) == 0) return std::to_string(row) + ":" + l;
    return "";
}

// The first screen on which `ok` holds within `timeout`, else the last one seen. tmux can show half a frame (the
// table's title redrawn, its rows not yet), more often on a slow (sanitized) build: wait for what is checked.
TEST(TuiAnomalies, alert_fixture_sort_filter_drill_and_back) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    const std::string shared = shared_dir();
    if (shared.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: real msprobe fixtures not available");
    TempDir tmp;
    const std::string fixture = shared + "/fixtures/msprobe-real/alert";
    ASSERT_EQ(run({program("msmon"), "ingest", fixture, "--db", tmp / "store.db", "--monitor-config",
                   fixture + "/config.json"},
                  {{"XDG_STATE_HOME", tmp / "state"}})
                  .exit_code,
              0);
    TmuxSession t(
        program("msmon-tui") + " " + fixture + " --db " + (tmp / "store.db"), 120, 40,
        {{"LANG", "C.UTF-8"}, {"LC_ALL", "C.UTF-8"}, {"TERM", "xterm-256color"}, {"XDG_STATE_HOME", tmp / "state"}});
    ASSERT_FALSE(t.wait_for("Overview", milliseconds(8000)).empty());
    t.send_keys("3", true);
    std::string screen = t.wait_for("Turbulence", milliseconds(5000));  // the rows, not just the header
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("Nan"), std::string::npos) << screen;
    // Sort by step: s cycles incidents (the tab opens on them) -> rank -> first anomaly -> step.
    t.send_keys("s", true);
    t.send_keys("s", true);
    t.send_keys("s", true);
    screen = t.screen_when(
        [](const std::string& s) {
            return s.find("sort step") != std::string::npos &&
                   selected_line(s).find("     0    0 ") != std::string::npos;
        },
        milliseconds(3000));
    ASSERT_NE(screen.find("sort step"), std::string::npos) << screen;
    EXPECT_NE(selected_line(screen).find("     0    0 "), std::string::npos) << "step 0 is not first:\n" << screen;
    // Only AnomalyNan: the step-20 NaN on layers.1.fc1.weight is there.
    t.send_keys(":", true);
    t.send_keys("rule AnomalyNan", true);
    t.send_keys("Enter");
    screen = t.screen_when(
        [](const std::string& s) {  // the table's title, not the typed command
            return s.find("grouped  rule AnomalyNan") != std::string::npos &&
                   s.find("layers.1.fc1.weight") != std::string::npos;
        },
        milliseconds(3000));
    ASSERT_NE(screen.find("grouped  rule AnomalyNan"), std::string::npos) << screen;
    EXPECT_NE(screen.find("layers.1.fc1.weight"), std::string::npos) << screen;
    // Select that row: search downwards until it is the selected one.
    // One key at a time, each handled and drawn before the next: a key still queued in a slow TUI would move it
    // past the row the loop stopped at.
    for (int i = 0; i < 80 && selected_line(t.settled()).find("layers.1.fc1.weight") == std::string::npos; ++i) {
        const std::string before = selected_row(t.capture());
        t.send_keys("j", true);
        if (selected_row(t.settled()) == before) break;  // the last row
    }
    const std::string chosen = selected_line(t.capture());
    ASSERT_NE(chosen.find("layers.1.fc1.weight"), std::string::npos) << t.capture();
    EXPECT_NE(chosen.find("    20 "), std::string::npos) << chosen;
    // Enter: the chart at step 20, this tensor on this rank.
    t.send_keys("Enter");
    screen = t.wait_for(" layers.1.fc1.weight  steps", milliseconds(3000));  // the title names the tensor plainly
    ASSERT_FALSE(screen.empty()) << "Enter did not open the chart:\n" << t.capture();
    EXPECT_NE(screen.find("step 20"), std::string::npos) << screen;
    EXPECT_NE(screen.find("rank 0"), std::string::npos) << screen;
    // Esc: back to the table, the same row still selected.
    t.send_keys("Escape");
    screen = t.screen_when(
        [&](const std::string& s) {
            return s.find("grouped  rule AnomalyNan") != std::string::npos && selected_line(s) == chosen;
        },
        milliseconds(3000));
    ASSERT_NE(screen.find("grouped  rule AnomalyNan"), std::string::npos) << screen;
    EXPECT_EQ(selected_line(screen), chosen);
}

TEST(TuiHealth, rendered_fixture_shows_checkpoints_skips_and_the_stop) {
    const std::string shared = shared_dir();
    if (shared.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: rendered MindFormers fixtures not available");
    TempDir tmp;
    const std::string src = shared + "/fixtures/mindformers-rendered", out = tmp / "job/output";
    fs::create_directories(out + "/log/rank_7");
    fs::create_directories(out + "/msrun_log");
    fs::copy_file(src + "/rank_7_info.log", out + "/log/rank_7/info.log");
    fs::copy_file(src + "/worker_0.log", out + "/msrun_log/worker_0.log");
    fs::copy_file(src + "/health_ckpts.json", out + "/health_ckpts.json");
    for (const std::string lang : {"C.UTF-8", "C"}) {
        auto r = run(
            {program("msmon-tui"), tmp / "job", "--db", tmp / "store.db", "--snapshot", "health", "--size", "80x24"},
            {{"LANG", lang}, {"LC_ALL", lang}, {"XDG_STATE_HOME", tmp / "state"}});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const std::string& s = r.out;
        EXPECT_NE(s.find("JOB STOPPED at step 4"), std::string::npos) << s;
        EXPECT_NE(s.find("checkpoints: 4, 2 unhealthy"), std::string::npos) << s;
        EXPECT_NE(s.find("healthy   RESUME step 3      rank 0   llama3_1_8b_rank_0-3_1.safetensors"), std::string::npos)
            << s;
        EXPECT_NE(s.find("data skipped at 2 steps"), std::string::npos) << s;
        // Which thresholds the spikes were judged with: the job's own, from its data-skip and stop lines.
        EXPECT_NE(s.find("\n  spike threshold 3: the job's, from msrun_log/worker_0.log line 38\n"
                         "  stop after 2 in a row: the job's, from msrun_log/worker_0.log line 38\n"),
                  std::string::npos)
            << s;
        std::istringstream in(s);
        int lines = 0;
        for (std::string l; std::getline(in, l); ++lines) {
            std::size_t cols = 0;
            for (unsigned char c : l) cols += (c & 0xC0) != 0x80;
            EXPECT_LE(cols, 80u) << l;
            if (lang == "C") {
                for (unsigned char c : l) EXPECT_LT(c, 0x80) << l;
            }
        }
        EXPECT_LE(lines, 24);
    }
    // From the overview the unhealthy checkpoints are counted in the status line.
    auto ov = run(
        {program("msmon-tui"), tmp / "job", "--db", tmp / "store.db", "--snapshot", "overview", "--size", "120x20"});
    EXPECT_NE(ov.out.find("2 unhealthy ckpts"), std::string::npos) << ov.out;
    // The events themselves (scrolling down): the data skips and the stop's error line.
    auto r =
        run({program("msmon-tui"), tmp / "job", "--db", tmp / "store.db", "--snapshot", "health", "--size", "100x40"});
    EXPECT_NE(r.out.find("data_skip"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("stop               ValueError: Current global norm [51.204178] of step 4"), std::string::npos)
        << r.out;
}

TEST(TuiHealth, a_simulated_run_shows_its_checkpoints_skips_and_stop) {
    TempDir tmp;
    ASSERT_EQ(run({program("msmon"), "simulate", tmp / "job", "--ranks", "8", "--steps", "30", "--params", "4",
                   "--logs", "--health", "--faults", "spike@10,stop@28"})
                  .exit_code,
              0);
    auto r =
        run({program("msmon-tui"), tmp / "job", "--db", tmp / "store.db", "--snapshot", "health", "--size", "100x40"},
            {{"LANG", "C.UTF-8"}, {"LC_ALL", "C.UTF-8"}, {"XDG_STATE_HOME", tmp / "state"}});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("JOB STOPPED at step 28"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("checkpoints: 2, 1 unhealthy"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("healthy   RESUME step 20"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("8 ranks     data_skip"), std::string::npos) << "data skips grouped across ranks:\n" << r.out;
}

// The table of every anomaly at 80 columns: a kind longer than its column (embedding_local_norm, 20 characters, in
// 18) ends in the cut mark, in UTF-8 and in ASCII; it was cut bare ("embedding_local_no"). The rendered worker log
// with the config MindFormers pprints before it (the embedding threshold 270: 313.9 at step 4 is over it).
TEST(TuiAnomalies, a_long_kind_in_the_table_of_every_anomaly_is_cut_with_the_mark) {
    const std::string shared = shared_dir();
    if (shared.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: rendered MindFormers fixtures not available");
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TempDir tmp;
    fs::create_directories(tmp / "job/output/msrun_log");
    write_file(tmp / "job/output/msrun_log/worker_0.log",
               "{'callbacks': [{'type': 'MFLossMonitor'},\n"
               "               {'embedding_local_norm_threshold': 270.0,\n"
               "                'type': 'CheckpointMonitor'}]}\n" +
                   read_file(shared + "/fixtures/mindformers-rendered/worker_0.log"));
    for (const auto& [lang, mark] : {std::pair<std::string, std::string>{"C.UTF-8", "\u2026"}, {"C", "~"}}) {
        TmuxSession t(
            program("msmon-tui") + " " + (tmp / "job") + " --db " + (tmp / ("store-" + lang + ".db")), 80, 24,
            {{"LANG", lang}, {"LC_ALL", lang}, {"TERM", "xterm-256color"}, {"XDG_STATE_HOME", tmp / "state"}});
        ASSERT_FALSE(t.wait_for("3 Anomalies", milliseconds(8000)).empty()) << t.capture();
        t.send_keys("3", true);
        ASSERT_FALSE(t.wait_for("GlobalNormSpike", milliseconds(5000)).empty()) << t.capture();
        t.send_keys("i", true);
        const std::string screen = t.wait_for("EmbeddingNormHigh embed_norm" + mark, milliseconds(5000));
        EXPECT_FALSE(screen.empty()) << lang << "\n" << t.capture();
        t.send_keys("q", true);
    }
}

// The Health tab's figures count what a person counts: steps and ranks, not findings or log lines. Before, this run
// showed "max inf" (the NaN at step 35; the true max is the spike's 189.042), "16 spikes" (2 steps x 8 ranks),
// "8 data skips" (1 step), "run config: 32 keys" (4 keys x 8 ranks) and each checkpoint save once per rank.
TEST(TuiHealth, figures_count_steps_ranks_and_keys_and_one_event_on_every_rank_is_one_line) {
    TempDir tmp;
    ASSERT_EQ(run({program("msmon"), "simulate", tmp / "job", "--ranks", "8", "--steps", "60", "--logs", "--health",
                   "--tensorboard", "--faults", "spike@20,nan@35:r3", "--restart-at", "45"})
                  .exit_code,
              0);
    // In a terminal, as a person opens the Health tab on the run (read whole first: the figures are the run's).
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    ASSERT_EQ(run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "store.db"}).exit_code, 0);
    TmuxSession t(program("msmon-tui") + " --db " + (tmp / "store.db"), 100, 40,
                  {{"LANG", "C.UTF-8"},
                   {"LC_ALL", "C.UTF-8"},
                   {"TERM", "xterm-256color"},
                   {"XDG_STATE_HOME", tmp / "state"},
                   {"XDG_CACHE_HOME", tmp / "cache"}});
    ASSERT_FALSE(t.wait_for("6 Experts", milliseconds(10000)).empty()) << t.capture();
    t.send_keys("4", true);
    const std::string s = t.wait_for("  step 45     8 ranks     start", milliseconds(10000));
    ASSERT_FALSE(s.empty()) << t.capture();
    EXPECT_NE(s.find("global norm: latest 1.49623 at step 60, max 189.042; not finite at 1 step, from step 35"),
              std::string::npos)
        << s;
    EXPECT_NE(s.find("  spikes >= 3 at 2 steps on 8 ranks; data skipped at 1 step"), std::string::npos) << s;
    EXPECT_NE(s.find("run config: 5 keys from text summaries, the same on 8 ranks"), std::string::npos) << s;
    EXPECT_NE(s.find("  step 10     8 ranks     checkpoint_saved   Finish saving ckpt of epoch 10"), std::string::npos)
        << s;
    EXPECT_EQ(s.find("rank 1   checkpoint_saved"), std::string::npos) << "one line per save, not one per rank:\n" << s;
    // The first launch and the relaunch after step 45: two start lines of 8 ranks each, not one of 16.
    EXPECT_NE(s.find("  step -      8 ranks     start"), std::string::npos) << s;
    EXPECT_NE(s.find("  step 45     8 ranks     start"), std::string::npos) << s;
    EXPECT_EQ(s.find("16 ranks"), std::string::npos) << s;
}

// Live, in a terminal: checkpoints arriving in health_ckpts.json while the Health tab is open do not move the
// sections below (the global norm stays on its row); past four, the list says how many more there are.
TEST(TuiHealth, a_checkpoint_arriving_does_not_move_the_sections_below) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TempDir tmp;
    ASSERT_EQ(run({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--steps", "30", "--logs", "--health",
                   "--ckpt-every", "10"})
                  .exit_code,
              0);
    TmuxSession t(program("msmon-tui") + " " + (tmp / "job") + " --db " + (tmp / "store.db"), 100, 30,
                  {{"LANG", "C.UTF-8"},
                   {"LC_ALL", "C.UTF-8"},
                   {"TERM", "xterm-256color"},
                   {"XDG_STATE_HOME", tmp / "state"},
                   {"XDG_CACHE_HOME", tmp / "cache"}});
    ASSERT_FALSE(t.wait_for("6 Experts", milliseconds(8000)).empty()) << t.capture();
    t.send_keys("4", true);
    const auto row_of = [](const std::string& screen, const std::string& start) {
        std::istringstream in(screen);
        int row = 0;
        for (std::string l; std::getline(in, l); ++row)
            if (l.rfind(start, 0) == 0) return row;
        return -1;
    };
    // The run read to its end: the last checkpoint and the last step's global norm on screen.
    std::string screen = t.screen_when(
        [](const std::string& s) {
            return s.find("RESUME step 30") != std::string::npos &&
                   s.find("global norm: latest") != std::string::npos && s.find("at step 30,") != std::string::npos;
        },
        milliseconds(20000));
    ASSERT_NE(screen.find("at step 30,"), std::string::npos) << screen;
    const int norm_row = row_of(screen, "global norm: ");
    ASSERT_GT(norm_row, 0) << screen;
    // Three more checkpoints, written as MindFormers rewrites the file: whole.
    const std::string file = tmp / "job/output/health_ckpts.json";
    std::string entries;
    for (int step = 10; step <= 60; step += 10)
        entries += std::string(entries.empty() ? "" : ",\n") +
                   "    {\"is_health\": 0, \"ckpt_name\": \"llama3_1_8b_rank_0-" + std::to_string(step) +
                   "_1.safetensors\"}";
    {
        std::ofstream out(file + ".tmp");
        out << "[\n" << entries << "\n]\n";
    }
    std::filesystem::rename(file + ".tmp", file);
    screen = t.wait_for("RESUME step 60", milliseconds(20000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_EQ(row_of(screen, "global norm: "), norm_row) << screen;
    EXPECT_NE(screen.find("checkpoints: 6, 0 unhealthy"), std::string::npos) << screen;
    EXPECT_NE(screen.find("  ... 2 more (msmon health lists every one)"), std::string::npos) << screen;
    EXPECT_EQ(screen.find("step 20     rank 0"), std::string::npos) << "the oldest give way:\n" << screen;
}

TEST(TuiAnomalies, both_views_render_at_80x24_in_ascii_without_overflow) {
    TempDir tmp;
    ASSERT_EQ(run({program("msmon"), "simulate", tmp / "job", "--ranks", "8", "--steps", "30", "--params", "4",
                   "--logs", "--health", "--faults", "spike@10,nan@20:r3"})
                  .exit_code,
              0);
    for (const char* view : {"anomalies", "health"}) {
        auto r =
            run({program("msmon-tui"), tmp / "job", "--db", tmp / "store.db", "--snapshot", view, "--size", "80x24"},
                {{"LANG", "C"}, {"LC_ALL", "C"}, {"XDG_STATE_HOME", tmp / "state"}});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        std::istringstream in(r.out);
        int lines = 0;
        for (std::string l; std::getline(in, l); ++lines) {
            EXPECT_LE(l.size(), 80u) << view << ": " << l;
            for (unsigned char c : l) EXPECT_LT(c, 0x80) << view << ": " << l;
        }
        EXPECT_LE(lines, 24) << view;
    }
}

}  // namespace
}  // namespace msmon::test
