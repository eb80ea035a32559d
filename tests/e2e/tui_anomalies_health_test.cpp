// The anomalies and health views in a real terminal: msprobe's alert fixture (sort, filter, drill into the
// chart and back) and MindFormers' rendered health fixture; both at 80×24 and in ASCII.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <sstream>
#include <thread>

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
std::string screen_when(const TmuxSession& t, const std::function<bool(const std::string&)>& ok,
                        milliseconds timeout) {
    std::string screen;
    wait_until([&] { return ok(screen = t.capture()); }, timeout);
    return screen;
}

TEST(TuiAnomalies, alert_fixture_sort_filter_drill_and_back) {
    if (!TmuxSession::available()) GTEST_SKIP() << "tmux is not installed";
    const std::string shared = shared_dir();
    if (shared.empty()) GTEST_SKIP() << "../shared is absent: real msprobe fixtures not available";
    TempDir tmp;
    const std::string fixture = shared + "/fixtures/msprobe-real/alert";
    ASSERT_EQ(run({program("msmon"), "ingest", fixture, "--db", tmp / "store.db", "--monitor-config", fixture + "/config.json"},
                  {{"XDG_STATE_HOME", tmp / "state"}})
                  .exit_code,
              0);
    TmuxSession t(program("msmon-tui") + " " + fixture + " --db " + (tmp / "store.db"), 120, 40,
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
    screen = screen_when(t, [](const std::string& s) {
        return s.find("sort step") != std::string::npos && selected_line(s).find("     0    0 ") != std::string::npos;
    }, milliseconds(3000));
    ASSERT_NE(screen.find("sort step"), std::string::npos) << screen;
    EXPECT_NE(selected_line(screen).find("     0    0 "), std::string::npos) << "step 0 is not first:\n" << screen;
    // Only AnomalyNan: the step-20 NaN on layers.1.fc1.weight is there.
    t.send_keys(":", true);
    t.send_keys("rule AnomalyNan", true);
    t.send_keys("Enter");
    screen = screen_when(t, [](const std::string& s) {  // the table's title, not the typed command
        return s.find("grouped  rule AnomalyNan") != std::string::npos && s.find("layers.1.fc1.weight") != std::string::npos;
    }, milliseconds(3000));
    ASSERT_NE(screen.find("grouped  rule AnomalyNan"), std::string::npos) << screen;
    EXPECT_NE(screen.find("layers.1.fc1.weight"), std::string::npos) << screen;
    // Select that row: search downwards until it is the selected one.
    // One key at a time, each seen to move the selection before the next: a key still queued in a slow TUI would
    // move it past the row the loop stopped at.
    for (int i = 0; i < 80 && selected_line(t.capture()).find("layers.1.fc1.weight") == std::string::npos; ++i) {
        const std::string before = selected_row(t.capture());
        t.send_keys("j", true);
        if (wait_until([&] { return selected_row(t.capture()) != before; }, milliseconds(3000)).count() < 0) break;
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
    screen = screen_when(t, [&](const std::string& s) {
        return s.find("grouped  rule AnomalyNan") != std::string::npos && selected_line(s) == chosen;
    }, milliseconds(3000));
    ASSERT_NE(screen.find("grouped  rule AnomalyNan"), std::string::npos) << screen;
    EXPECT_EQ(selected_line(screen), chosen);
}

TEST(TuiHealth, rendered_fixture_shows_checkpoints_skips_and_the_stop) {
    const std::string shared = shared_dir();
    if (shared.empty()) GTEST_SKIP() << "../shared is absent: rendered MindFormers fixtures not available";
    TempDir tmp;
    const std::string src = shared + "/fixtures/mindformers-rendered", out = tmp / "job/output";
    fs::create_directories(out + "/log/rank_7");
    fs::create_directories(out + "/msrun_log");
    fs::copy_file(src + "/rank_7_info.log", out + "/log/rank_7/info.log");
    fs::copy_file(src + "/worker_0.log", out + "/msrun_log/worker_0.log");
    fs::copy_file(src + "/health_ckpts.json", out + "/health_ckpts.json");
    for (const std::string lang : {"C.UTF-8", "C"}) {
        auto r = run({program("msmon-tui"), tmp / "job", "--db", tmp / "store.db", "--snapshot", "health", "--size", "80x24"},
                     {{"LANG", lang}, {"LC_ALL", lang}, {"XDG_STATE_HOME", tmp / "state"}});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const std::string& s = r.out;
        EXPECT_NE(s.find("JOB STOPPED at step 4"), std::string::npos) << s;
        EXPECT_NE(s.find("checkpoints: 4, 2 unhealthy"), std::string::npos) << s;
        EXPECT_NE(s.find("healthy   RESUME step 3      rank 0   llama3_1_8b_rank_0-3_1.safetensors"), std::string::npos) << s;
        EXPECT_NE(s.find("2 data skips"), std::string::npos) << s;
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
    auto ov = run({program("msmon-tui"), tmp / "job", "--db", tmp / "store.db", "--snapshot", "overview", "--size", "120x20"});
    EXPECT_NE(ov.out.find("2 unhealthy ckpts"), std::string::npos) << ov.out;
    // The events themselves (scrolling down): the data skips and the stop's error line.
    auto r = run({program("msmon-tui"), tmp / "job", "--db", tmp / "store.db", "--snapshot", "health", "--size", "100x40"});
    EXPECT_NE(r.out.find("data_skip"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("stop               ValueError: Current global norm [51.204178] of step 4"), std::string::npos) << r.out;
}

TEST(TuiHealth, a_simulated_run_shows_its_checkpoints_skips_and_stop) {
    TempDir tmp;
    ASSERT_EQ(run({program("msmon"), "simulate", tmp / "job", "--ranks", "8", "--steps", "30", "--params", "4", "--logs",
                   "--health", "--faults", "spike@10,stop@28"})
                  .exit_code,
              0);
    auto r = run({program("msmon-tui"), tmp / "job", "--db", tmp / "store.db", "--snapshot", "health", "--size", "100x40"},
                 {{"LANG", "C.UTF-8"}, {"LC_ALL", "C.UTF-8"}, {"XDG_STATE_HOME", tmp / "state"}});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("JOB STOPPED at step 28"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("checkpoints: 2, 1 unhealthy"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("healthy   RESUME step 20"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("8 ranks  data_skip"), std::string::npos) << "data skips grouped across ranks:\n" << r.out;
}

TEST(TuiAnomalies, both_views_render_at_80x24_in_ascii_without_overflow) {
    TempDir tmp;
    ASSERT_EQ(run({program("msmon"), "simulate", tmp / "job", "--ranks", "8", "--steps", "30", "--params", "4", "--logs",
                   "--health", "--faults", "spike@10,nan@20:r3"})
                  .exit_code,
              0);
    for (const char* view : {"anomalies", "health"}) {
        auto r = run({program("msmon-tui"), tmp / "job", "--db", tmp / "store.db", "--snapshot", view, "--size", "80x24"},
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
