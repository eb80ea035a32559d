// Drill-downs land on the rank and step they were opened on, in a real terminal: Enter on an
// anomaly charts that row's rank at that row's step, `:rank N` focuses rank N or says there is none, the
// Overview's selection is a rank that sorting cannot move, a drill-down leaves the Overview's statistic as it
// was, and `--db STORE` alone shows a store read-only. Every check reads the screen; none depends on which
// detector flagged the anomaly.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <regex>
#include <sstream>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

// The program's last frame once it settled, styled (capture-pane -e).
std::string still_styled(const TmuxSession& t) {
    return t.settled_styled();
}

// The first screen on which `ok` holds within `timeout`, else the last one seen.
// The Anomalies table's selected row (it starts with '>'), and its step and rank columns.
struct AnomalyRowSeen {
    std::string line;
    long long step = -1;
    int rank = -1;
};

AnomalyRowSeen selected_anomaly(const std::string& screen) {
    AnomalyRowSeen row;
    for (const auto& l : lines_of(screen))
        if (l.rfind(">", 0) == 0) {
            row.line = l;
            if (std::sscanf(l.c_str() + 1, "%lld %d", &row.step, &row.rank) != 2) row.step = row.rank = -1;
        }
    return row;
}

// The Overview's highlighted row (its rank label in reverse video): the rank, -1 if no row is highlighted, -2
// if more than one is.
int highlighted_rank(const std::string& styled) {
    static const std::regex label(R"(^[ !](\d+) *$)");
    int found = -1;
    for (const auto& runs : styled_runs(styled, Sgr::reverse))
        for (const auto& run : runs)
            if (std::smatch m; std::regex_match(run, m, label)) found = found == -1 ? std::stoi(m[1]) : -2;
    return found;
}

// The ranks of the Overview's rows, top to bottom.
std::vector<int> overview_order(const std::string& screen) {
    static const std::regex row(R"(^[ !](\d+) +\S)");
    std::vector<int> out;
    bool in_list = false;
    for (const auto& l : lines_of(screen)) {
        if (l.rfind("rank   history", 0) == 0) {
            in_list = true;
            continue;
        }
        std::smatch m;
        if (!in_list) continue;
        if (!std::regex_search(l, m, row)) break;  // the rows end; the status line (" 8 ranks") is not one
        out.push_back(std::stoi(m[1]));
    }
    return out;
}

// The chart's legend: the line that starts with the focused rank's label.
std::string legend_line(const std::string& screen, int rank) {
    for (const auto& l : lines_of(screen))
        if (l.rfind("rank " + std::to_string(rank) + "  ", 0) == 0 || l == "rank " + std::to_string(rank)) return l;
    return "";
}

// Legend labels drawn faint (dim) on the line that starts with the focused rank's label.
std::vector<std::string> faint_legend_labels(const std::string& styled, int rank) {
    const auto plain = lines_of(plain_text(styled));
    const auto runs = styled_runs(styled, Sgr::dim);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < plain.size() && i < runs.size(); ++i)
        if (plain[i].rfind("rank " + std::to_string(rank), 0) == 0)
            for (const auto& r : runs[i]) out.push_back(r);
    return out;
}

std::string status_line(const std::string& screen) {
    const auto lines = lines_of(screen);
    return lines.empty() ? "" : lines.back();
}

// Moves the selection with `key` one row at a time (each key handled and drawn before the next: a key still
// queued in a slow TUI would carry it past) until `done` holds or a key no longer moves it; the last screen.
std::string move_until(TmuxSession& t, const std::string& key, const std::function<bool(const std::string&)>& done,
                       const std::function<std::string(const std::string&)>& selection, int max_moves = 60) {
    std::string screen = t.settled();
    for (int i = 0; i < max_moves && !done(screen); ++i) {
        const std::string before = selection(screen);
        t.send_keys(key, true);
        screen = t.settled();
        if (selection(screen) == before) break;
    }
    return screen;
}

// A finished run of 4 ranks with a planted fault on rank 2 at step 30: a NaN gradient and all its gradients
// x50.
class TuiDrilldown : public ::testing::Test {
protected:
    void SetUp() override {
        if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
        job_ = tmp_ / "job";
        db_ = tmp_ / "store.db";
        auto sim = run({program("msmon"), "simulate", job_, "--ranks", "4", "--steps", "60", "--faults",
                        "nan@30:r2,spike@30:r2x50"});
        ASSERT_EQ(sim.exit_code, 0) << sim.err;
    }
    std::unique_ptr<TmuxSession> open() {
        auto t =
            std::make_unique<TmuxSession>(program("msmon-tui") + " " + job_ + " --db " + db_, 120, 40, tmux_env(tmp_));
        EXPECT_FALSE(t->wait_for("steps 0-59", milliseconds(10000)).empty()) << t->capture();
        return t;
    }
    // On the Anomalies tab's table of every anomaly (s: the sort after incidents, msmon's ranking), moves
    // down to the first row whose rank column is `rank`; that row.
    AnomalyRowSeen select_anomaly_of_rank(TmuxSession& t, int rank) {
        t.send_keys("3", true);
        EXPECT_FALSE(t.wait_for("incidents, most severe first", milliseconds(5000)).empty()) << t.capture();
        t.send_keys("s", true);
        EXPECT_FALSE(t.wait_for("sort rank  grouped", milliseconds(5000)).empty()) << t.capture();
        EXPECT_FALSE(
            t.screen_when([](const std::string& s) { return !selected_anomaly(s).line.empty(); }, milliseconds(5000))
                .empty());
        const std::string screen = move_until(
            t, "j", [&](const std::string& s) { return selected_anomaly(s).rank == rank; },
            [](const std::string& s) { return selected_anomaly(s).line; });
        return selected_anomaly(screen);
    }
    TempDir tmp_;
    std::string job_, db_;
};

TEST_F(TuiDrilldown, enter_on_an_anomaly_of_rank_2_charts_rank_2_at_its_step_and_esc_returns_to_the_row) {
    auto t = open();
    // The Overview's selection is rank 0 (its first row): the drill-down must not fall back to it.
    ASSERT_EQ(highlighted_rank(still_styled(*t)), 0) << t->capture();
    const AnomalyRowSeen row = select_anomaly_of_rank(*t, 2);
    ASSERT_EQ(row.rank, 2) << "no anomaly row names rank 2 (the planted fault):\n" << t->capture();
    ASSERT_GE(row.step, 0) << row.line;
    t->send_keys("Enter");
    // The read-out names the focused rank first: "step S: rank 2=<value> r0=... r1=... r3=...".
    const std::string readout = "step " + std::to_string(row.step) + ": rank 2=";
    const std::string screen = t->wait_for(readout, milliseconds(5000));
    ASSERT_FALSE(screen.empty()) << "the chart is not on rank 2 at step " << row.step << ":\n" << t->capture();
    // The same tensor and statistic as the row: its kind (whole in the table) begins the title.
    char kind[64] = "";  // the row: step, rank, rule, kind, ...
    ASSERT_EQ(std::sscanf(row.line.c_str() + 1, "%*d %*d %*s %63s", kind), 1) << row.line;
    EXPECT_EQ(lines_of(screen)[1].rfind(std::string(kind) + " ", 0), 0u) << row.line << "\n" << screen;
    // The legend: rank 2 bright, the other ranks' same statistic faint.
    EXPECT_NE(legend_line(screen, 2), "") << screen;
    const auto faint = faint_legend_labels(still_styled(*t), 2);
    for (const char* other : {"r0", "r1", "r3"})
        EXPECT_NE(std::find(faint.begin(), faint.end(), other), faint.end()) << other << " not drawn faint:\n"
                                                                             << screen;
    // A refresh (the Overview is re-read behind the chart) does not move the chart off rank 2.
    ASSERT_TRUE(t->next_frame()) << t->last_wait_error();
    const std::string refreshed = t->settled();
    EXPECT_NE(refreshed.find(readout), std::string::npos) << refreshed;
    // Esc: back on the Anomalies tab, the same row selected.
    t->send_keys("Escape");
    const std::string back =
        t->screen_when([&](const std::string& s) { return selected_anomaly(s).line == row.line; }, milliseconds(3000));
    EXPECT_EQ(selected_anomaly(back).line, row.line) << back;
    EXPECT_EQ(lines_of(back)[1].rfind("sort rank  grouped", 0), 0u) << "not the Anomalies table:\n" << back;
}

TEST_F(TuiDrilldown, colon_rank_focuses_exactly_that_rank_or_says_there_is_none) {
    auto t = open();
    auto command = [&](const std::string& text) {
        t->send_keys(":", true);
        t->send_keys(text, true);
        t->send_keys("Enter");
    };
    command("rank 2");
    // The legend fills in as the other ranks' series are read (a sanitized build on a busy machine is slow).
    std::string screen = t->screen_when(
        [](const std::string& s) {
            const std::string legend = legend_line(s, 2);
            return !legend.empty() && legend.find("r0") != std::string::npos &&
                   legend.find("r1") != std::string::npos && legend.find("r3") != std::string::npos;
        },
        milliseconds(8000));
    ASSERT_NE(legend_line(screen, 2), "") << "`:rank 2` did not chart rank 2:\n" << screen;
    for (const char* other : {"r0", "r1", "r3"})
        EXPECT_NE(legend_line(screen, 2).find(other), std::string::npos) << screen;
    // A rank the run does not have: said in the status line; the chart stays on rank 2.
    command("rank 77");
    screen = t->screen_when([](const std::string& s) { return status_line(s).find("no rank 77") != std::string::npos; },
                            milliseconds(3000));
    EXPECT_NE(status_line(screen).find("no rank 77 (4 ranks, 0-3)"), std::string::npos) << screen;
    EXPECT_NE(legend_line(screen, 2), "") << screen;
    command("rank two");
    screen =
        t->screen_when([](const std::string& s) { return status_line(s).find("not a rank: two") != std::string::npos; },
                       milliseconds(3000));
    EXPECT_NE(status_line(screen).find("not a rank: two"), std::string::npos) << screen;
    EXPECT_NE(legend_line(screen, 2), "") << screen;
    // Esc: the Overview, whose selection the chart shares, has rank 2 highlighted.
    t->send_keys("Escape");
    ASSERT_FALSE(t->wait_for("sort rank  steps", milliseconds(3000)).empty()) << t->capture();
    EXPECT_EQ(highlighted_rank(still_styled(*t)), 2) << t->capture();
    // From the Overview, a rank that does not exist keeps the Overview up and says so.
    command("rank 4");
    screen = t->screen_when([](const std::string& s) { return status_line(s).find("no rank 4 ") != std::string::npos; },
                            milliseconds(3000));
    EXPECT_NE(status_line(screen).find("no rank 4 (4 ranks, 0-3)"), std::string::npos) << screen;
    EXPECT_NE(screen.find("sort rank  steps"), std::string::npos) << "left the Overview:\n" << screen;
    // The Anomalies tab's rank filter takes the same check (the tab opens on incidents, which it filters
    // too).
    t->send_keys("3", true);
    ASSERT_FALSE(t->wait_for("incidents, most severe first", milliseconds(3000)).empty()) << t->capture();
    command("rank 77");
    screen = t->screen_when([](const std::string& s) { return status_line(s).find("no rank 77") != std::string::npos; },
                            milliseconds(3000));
    EXPECT_NE(status_line(screen).find("no rank 77"), std::string::npos) << screen;
    EXPECT_EQ(screen.find("  rank 77"), std::string::npos) << "the filter was applied:\n" << screen;
    command("rank 2");
    EXPECT_FALSE(t->wait_for("most severe first  rank 2", milliseconds(3000)).empty()) << t->capture();
}

TEST_F(TuiDrilldown, a_drill_down_leaves_the_overviews_kind_op_filter_and_selection_as_they_were) {
    auto t = open();
    t->send_keys(":", true);
    t->send_keys("kind param_origin", true);
    t->send_keys("Enter");
    ASSERT_FALSE(t->wait_for("kind param_origin  op norm", milliseconds(3000)).empty()) << t->capture();
    t->send_keys(":", true);
    t->send_keys("op max", true);
    t->send_keys("Enter");
    t->send_keys("/", true);
    t->send_keys("layers", true);
    t->send_keys("Enter");
    t->send_keys("j", true);
    const std::string before_title = "kind param_origin  op max  filter /layers/  sort rank  steps 0-59";
    ASSERT_FALSE(t->wait_for(before_title, milliseconds(3000)).empty()) << t->capture();
    ASSERT_EQ(highlighted_rank(still_styled(*t)), 1) << t->capture();
    // Drill into rank 2's anomaly (its own kind, op and a filter on its tensor), look, come back.
    const AnomalyRowSeen row = select_anomaly_of_rank(*t, 2);
    ASSERT_EQ(row.rank, 2) << t->capture();
    t->send_keys("Enter");
    ASSERT_FALSE(t->wait_for("step " + std::to_string(row.step) + ": rank 2=", milliseconds(5000)).empty())
        << t->capture();
    t->send_keys("Escape");
    const std::string back =
        t->screen_when([&](const std::string& s) { return selected_anomaly(s).line == row.line; }, milliseconds(3000));
    ASSERT_EQ(selected_anomaly(back).line, row.line) << back;
    t->send_keys("1", true);
    const std::string after = t->screen_when(  // the Overview's title (the Anomalies one also says "sort rank")
        [](const std::string& s) { return lines_of(s).size() > 1 && lines_of(s)[1].rfind("kind ", 0) == 0; },
        milliseconds(3000));
    ASSERT_GT(lines_of(after).size(), 1u) << t->capture();
    EXPECT_EQ(lines_of(after)[1], before_title) << after;
    EXPECT_EQ(highlighted_rank(still_styled(*t)), 1) << t->capture();
    // And the chart the Overview opens is the Overview's statistic again, on its selected rank.
    t->send_keys("Enter");
    const std::string chart = t->wait_for("param_origin max /layers/", milliseconds(3000));
    ASSERT_FALSE(chart.empty()) << t->capture();
    EXPECT_NE(legend_line(chart, 1), "") << chart;
}

// A live run sorted by deviation reorders the rows as values arrive; the highlight stays on the rank chosen.
TEST(TuiOverviewSelection, follows_the_rank_when_sorting_by_deviation_reorders_rows_on_a_live_run) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TempDir tmp;
    const std::string out = tmp / "job";
    Background sim({program("msmon"), "simulate", out, "--ranks", "8", "--steps", "400", "--step-ms", "150"},
                   tmp.path());
    ASSERT_GE(wait_until([&] { return std::filesystem::exists(out); }, milliseconds(5000)).count(), 0);
    TmuxSession t(program("msmon-tui") + " " + out + " --db " + (tmp / "store.db"), 120, 40, tmux_env(tmp));
    const auto all_ranks = [](const std::string& s) { return overview_order(s).size() == 8; };
    ASSERT_TRUE(all_ranks(t.screen_when(all_ranks, milliseconds(15000)))) << t.capture();
    move_until(
        t, "j", [](const std::string&) { return false; },
        [&](const std::string&) { return std::to_string(highlighted_rank(still_styled(t))); }, 5);
    ASSERT_EQ(highlighted_rank(still_styled(t)), 5) << t.capture();
    // The ranks' own gradients: grad_reduced, the all-reduce's mean, is the same on every rank.
    const std::string unreduced = move_until(
        t, "]", [](const std::string& s) { return s.find("kind grad_unreduced") != std::string::npos; },
        [](const std::string& s) { return lines_of(s).size() > 1 ? lines_of(s)[1] : s; }, 12);
    ASSERT_NE(unreduced.find("kind grad_unreduced"), std::string::npos) << unreduced;
    for (int i = 0; i < 2; ++i) t.send_keys("s", true);
    ASSERT_FALSE(t.wait_for("sort deviation", milliseconds(3000)).empty()) << t.capture();
    // Ten frames, each after a refresh with a new step; the row order of each.
    static const std::regex steps_re(R"(sort deviation  steps 0-(\d+))");
    long long last_step = -1;
    std::vector<std::vector<int>> orders;
    for (int frame = 0; frame < 10; ++frame) {
        std::string styled, plain;
        std::smatch m;
        const bool fresh = wait_until(
                               [&] {
                                   styled = still_styled(t);
                                   plain = plain_text(styled);
                                   return std::regex_search(plain, m, steps_re) && std::stoll(m[1]) > last_step;
                               },
                               milliseconds(5000))
                               .count() >= 0;
        ASSERT_TRUE(fresh) << "no new step on screen:\n" << plain;
        last_step = std::stoll(m[1]);
        orders.push_back(overview_order(plain));
        EXPECT_EQ(highlighted_rank(styled), 5) << "frame " << frame << " (step " << last_step << "):\n" << plain;
    }
    // The test means something only if the sort did move rows while it watched.
    int reorders = 0;
    for (std::size_t i = 1; i < orders.size(); ++i) reorders += orders[i] != orders[i - 1];
    EXPECT_GT(reorders, 0) << "the rows never reordered across 10 refreshes";
    std::printf("[ frames ] rows reordered in %d of 9 refreshes\n", reorders);
    t.send_keys("q", true);
}

// msmon-tui --db STORE: an existing store with no job folder, shown read-only as `msmon query --db` reads it.
TEST(TuiStore, opens_an_ingested_store_alone_read_only_and_refuses_a_missing_one) {
    TempDir tmp;
    const std::string job = tmp / "job", db = tmp / "S.db";
    ASSERT_EQ(run({program("msmon"), "simulate", job, "--ranks", "4", "--steps", "20"}).exit_code, 0);
    const auto env = tmux_env(tmp);
    auto ingest = run({program("msmon"), "ingest", job, "--db", db}, env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    const std::string store_bytes = read_file(db);
    auto snap = run({program("msmon-tui"), "--db", db, "--snapshot", "overview", "--size", "100x30"}, env);
    ASSERT_EQ(snap.exit_code, 0) << snap.err;
    EXPECT_EQ(overview_order(snap.out), (std::vector<int>{0, 1, 2, 3})) << snap.out;
    EXPECT_NE(snap.out.find("4 ranks | steps 0-19"), std::string::npos) << snap.out;
    if (TmuxSession::available()) {
        // Wide enough for the whole status line, the store's path at its end.
        TmuxSession t(program("msmon-tui") + " --db " + db + "; echo EXIT=$? > " + (tmp / "exit"), 200, 30, env);
        const std::string screen = t.wait_for("steps 0-19", milliseconds(8000));
        ASSERT_FALSE(screen.empty()) << t.capture();
        EXPECT_EQ(overview_order(screen), (std::vector<int>{0, 1, 2, 3})) << screen;
        EXPECT_NE(status_line(screen).find("store, read only, not following"), std::string::npos) << screen;
        EXPECT_NE(status_line(screen).find(db), std::string::npos) << screen;
        for (const char* watching : {"inotify", "polling"})
            EXPECT_EQ(screen.find(watching), std::string::npos) << screen;
        t.send_keys("q", true);
        EXPECT_GE(wait_until([&] { return read_file(tmp / "exit") == "EXIT=0\n"; }, milliseconds(5000)).count(), 0)
            << t.capture();
    }
    EXPECT_TRUE(read_file(db) == store_bytes) << "the store was written to";
    // A store that is not there: said so, nothing created in its place.
    for (const std::vector<std::string>& extra : {std::vector<std::string>{}, {"--snapshot", "overview"}}) {
        std::vector<std::string> argv = {program("msmon-tui"), "--db", tmp / "missing.db"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        auto r = run(argv, env);
        EXPECT_EQ(r.exit_code, 1) << r.out;
        EXPECT_NE(r.err.find("no store at '" + (tmp / "missing.db") + "'"), std::string::npos) << r.err;
        EXPECT_FALSE(std::filesystem::exists(tmp / "missing.db"));
    }
    auto neither = run({program("msmon-tui")}, env);
    EXPECT_EQ(neither.exit_code, 2) << neither.err;
}

}  // namespace
}  // namespace msmon::test
