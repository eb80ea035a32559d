// The Layers tab in a real terminal, as a person uses it: it opens on the cell where the top incident
// began (that rank, that tensor, that step, marked), tensors in forward order; Enter charts that tensor at that
// step with that rank in front; `d` fixes one step (tensors x ranks) and then one tensor (ranks x steps) around
// the same cell; `!` comes back to the origin; micro-steps fold into their step and `m` shows them apart; `/`
// filters by layer, type and side; Space folds a layer.
#include <gtest/gtest.h>

#include <regex>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

// A screen line's code points (labels hold multi-byte ellipses, marks are ◆ and •).
std::vector<std::string> code_points(const std::string& line) {
    std::vector<std::string> out;
    for (std::size_t b = 0; b < line.size(); ++b) {
        if ((static_cast<unsigned char>(line[b]) & 0xC0) == 0x80) out.back() += line[b];
        else out.emplace_back(1, line[b]);
    }
    return out;
}

// The Layers tab as read off the screen: each row's label and its marks by column, the axis under the rows
// (steps, or ranks when one step is fixed), and the cursor's read-out.
struct LayersScreen {
    struct Row {
        std::string label;
        std::map<std::size_t, std::string> marks;  // column -> "!", "◆", "•", "^", "v"
    };
    std::string title;
    std::vector<Row> rows;
    std::map<std::size_t, std::string> axis;  // column -> the label starting there
    std::string cursor;                       // the read-out under the axis

    // The column of a step (steps across): the axis's first and last labels are its first and last steps,
    // one step a column.
    std::size_t column_of_step(long long step) const {
        const auto first = axis.begin();
        return first->first + static_cast<std::size_t>(step - std::stoll(first->second));
    }
    long long step_at(std::size_t column) const {
        return std::stoll(axis.begin()->second) + static_cast<long long>(column - axis.begin()->first);
    }
    const Row* row(const std::string& label) const {
        for (const auto& r : rows)
            if (r.label == label) return &r;
        return nullptr;
    }
};

LayersScreen read_layers(const std::string& screen) {
    LayersScreen s;
    const auto lines = lines_of(screen);
    if (lines.size() < 4) return s;
    s.title = lines[1];
    // The axis: the first line under the rows that holds only numbers or rank labels, indented to the map.
    const std::regex axis_line(R"(^ +r?\d+( +r?\d+)* *$)");
    std::size_t axis = 0;
    for (std::size_t i = 3; i < lines.size() && axis == 0; ++i)
        if (std::regex_match(lines[i], axis_line)) axis = i;
    if (axis == 0) return s;
    const auto cells = code_points(lines[axis]);
    for (std::size_t c = 0; c < cells.size(); ++c)
        if (cells[c] != " " && (c == 0 || cells[c - 1] == " ")) {
            std::size_t e = c;
            std::string label;
            while (e < cells.size() && cells[e] != " ") label += cells[e++];
            s.axis[c] = label;
        }
    const std::size_t map_x = s.axis.begin()->first;
    for (std::size_t i = 3; i < axis; ++i) {
        LayersScreen::Row row;
        const auto cps = code_points(lines[i]);
        for (std::size_t c = 0; c < cps.size() && c < map_x && cps[c] != " "; ++c) row.label += cps[c];
        for (std::size_t c = map_x > 2 ? map_x - 2 : 0; c < cps.size(); ++c)
            if (cps[c] == "!" || cps[c] == "◆" || cps[c] == "•" || cps[c] == "^" || cps[c] == "v")
                row.marks[c] = cps[c];
        s.rows.push_back(std::move(row));
    }
    if (axis + 1 < lines.size()) s.cursor = lines[axis + 1];
    return s;
}

// A fault run read whole into a store first (live, the view shows what has been read so far), then the TUI on it,
// on the Layers tab once the incident is grouped.
struct LayersSession {
    TempDir tmp;
    std::unique_ptr<TmuxSession> tui;
    bool open(const std::string& job, int width, int height) {
        if (run({program("msmon"), "ingest", job, "--db", tmp / "store.db"}).exit_code != 0) return false;
        tui = std::make_unique<TmuxSession>(program("msmon-tui") + " --db " + (tmp / "store.db"), width, height,
                                            tmux_env(tmp));
        if (tui->wait_for("| 1 incident |", milliseconds(20000)).empty()) return false;
        tui->send_keys("7", true);
        return true;
    }
    LayersScreen when(const std::function<bool(const LayersScreen&)>& ok) {
        last =
            tui->screen_when([&](const std::string& screen) { return ok(read_layers(screen)); }, milliseconds(15000));
        return read_layers(last);
    }
    std::string last;
};

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

// The real msprobe run with a NaN (../shared): one NaN in layers.0.fc2's output on rank 3 at step 11.
TEST(TuiLayers, a_real_nan_opens_on_its_origin_cell_and_enter_d_and_bang_keep_to_that_cell) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    const std::string shared = shared_dir();
    if (shared.empty())
        MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real msprobe fault runs are not available");
    LayersSession s;
    ASSERT_TRUE(s.open(shared + "/fixtures/msprobe-faults/nan", 110, 34)) << (s.tui ? s.tui->capture() : "");
    // Opens on rank 3, the cursor on the origin's cell.
    auto l = s.when([](const LayersScreen& l) { return contains(l.title, "rank 3  kind actv  op norm  40 tensors"); });
    ASSERT_TRUE(contains(l.cursor, "step 11, rank 3, module.layers.0.fc2.output: nan  (the top incident began here)"))
        << s.last;
    // Forward order, and the origin's mark is the first on the rank: at step 11 on that row; the rows before it
    // (upstream) are marked from step 12 on (the weights the all-reduce spread), the rows after it from 11.
    ASSERT_GE(l.rows.size(), 12u) << s.last;
    EXPECT_EQ(l.rows[0].label, "module.embed.input") << s.last;
    EXPECT_EQ(l.rows[5].label, "module.layers.0.fc1.output") << s.last;
    EXPECT_EQ(l.rows[9].label, "module.layers.0.fc2.output") << s.last;
    const auto* origin = l.row("module.layers.0.fc2.output");
    ASSERT_TRUE(origin && !origin->marks.empty()) << s.last;
    EXPECT_EQ(origin->marks.begin()->second, "◆") << s.last;
    EXPECT_EQ(l.step_at(origin->marks.begin()->first), 11) << s.last;
    bool upstream = true;
    for (const auto& row : l.rows) {
        if (&row == origin) {
            upstream = false;
        } else if (!row.marks.empty()) {
            EXPECT_GE(l.step_at(row.marks.begin()->first), upstream ? 12 : 11) << row.label;
        }
    }

    // Enter: the chart of that tensor, its cursor at step 11, rank 3 first in the read-out.
    s.tui->send_keys("Enter");
    const std::string chart = s.tui->wait_for("step 11: rank 3=nan", milliseconds(15000));
    ASSERT_FALSE(chart.empty()) << s.tui->capture();
    EXPECT_TRUE(contains(chart, "actv norm module.layers.0.fc2.output")) << chart;

    // Back, then `d`: step 11 across the ranks, the same tensor selected, the cursor on rank 3.
    s.tui->send_keys("Escape");
    s.when([](const LayersScreen& l) { return contains(l.title, "rank 3  kind actv"); });
    s.tui->send_keys("d", true);
    l = s.when(
        [](const LayersScreen& l) { return contains(l.title, "step 11  kind actv  op norm  40 tensors on 4 ranks"); });
    EXPECT_TRUE(contains(l.cursor, "step 11, rank 3, module.layers.0.fc2.output: nan")) << s.last;
    origin = l.row("module.layers.0.fc2.output");
    ASSERT_TRUE(origin && !origin->marks.empty()) << s.last;
    // The row's marks are all in rank 3's cell, under the label r3, the first one the origin's: the other ranks
    // are NaN a step later.
    std::size_t r3 = 0;
    for (const auto& [column, label] : l.axis)
        if (label == "r3") r3 = column;
    ASSERT_GT(r3, 0u) << s.last;
    EXPECT_EQ(origin->marks.begin()->first, r3) << s.last;
    EXPECT_EQ(origin->marks.begin()->second, "◆") << s.last;
    EXPECT_LT(origin->marks.rbegin()->first, r3 + 4) << s.last;

    // `d` again: that tensor on every rank, steps across; rank 3's row holds the origin at step 11, the others'
    // first marks are later.
    s.tui->send_keys("d", true);
    l = s.when([](const LayersScreen& l) {
        return contains(l.title, "module.layers.0.fc2.output  kind actv  op norm  4 ranks");
    });
    EXPECT_TRUE(contains(l.cursor, "step 11, rank 3, module.layers.0.fc2.output: nan")) << s.last;
    ASSERT_EQ(l.rows.size(), 4u) << s.last;
    EXPECT_EQ(l.rows[3].label, "rank");  // "rank 3": the label ends at the first space
    ASSERT_FALSE(l.rows[3].marks.empty()) << s.last;
    EXPECT_EQ(l.step_at(l.rows[3].marks.begin()->first), 11) << s.last;
    for (int r = 0; r < 3; ++r) {
        ASSERT_FALSE(l.rows[static_cast<std::size_t>(r)].marks.empty()) << s.last;
        EXPECT_GT(l.step_at(l.rows[static_cast<std::size_t>(r)].marks.begin()->first), 11) << s.last;
    }

    // Elsewhere (back to one rank, rank 0, the last row, the latest step), then `!`: the origin again.
    s.tui->send_keys("d", true);
    s.when([](const LayersScreen& l) { return contains(l.title, "rank 3  kind actv"); });
    s.tui->send_keys("rG0", true);
    l = s.when([](const LayersScreen& l) { return contains(l.cursor, "step 49, rank 0, .output:"); });
    ASSERT_TRUE(contains(l.cursor, "step 49, rank 0")) << s.last;
    s.tui->send_keys("!", true);
    l = s.when([](const LayersScreen& l) { return contains(l.cursor, "(the top incident began here)"); });
    EXPECT_TRUE(contains(l.cursor, "step 11, rank 3, module.layers.0.fc2.output: nan")) << s.last;
    EXPECT_TRUE(contains(l.title, "rank 3  kind actv")) << s.last;
}

// The real run where rank 0's batch is x25 at step 44: the origin is rank 0's embedding input, a jump, not a NaN.
TEST(TuiLayers, a_real_corrupt_batch_opens_on_rank_0_s_embedding_input_at_step_44_with_its_ratio) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    const std::string shared = shared_dir();
    if (shared.empty())
        MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real msprobe fault runs are not available");
    LayersSession s;
    ASSERT_TRUE(s.open(shared + "/fixtures/msprobe-faults/baddata", 110, 34)) << (s.tui ? s.tui->capture() : "");
    auto l = s.when([](const LayersScreen& l) { return contains(l.cursor, "(the top incident began here)"); });
    EXPECT_TRUE(contains(l.title, "rank 0  kind actv  op norm")) << s.last;
    EXPECT_TRUE(contains(l.cursor, "step 44, rank 0, module.embed.input: ")) << s.last;
    // "<value> = <ratio>x its last 8 steps": the planted x25, within what a batch's own spread allows.
    const std::regex ratio(R"(= ([0-9.]+)x its last 8 steps)");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(l.cursor, m, ratio)) << s.last;
    EXPECT_GT(std::stod(m[1]), 15) << s.last;
    EXPECT_LT(std::stod(m[1]), 40) << s.last;
    const auto* origin = l.row("module.embed.input");
    ASSERT_TRUE(origin && !origin->marks.empty()) << s.last;
    EXPECT_EQ(origin->marks.begin()->second, "◆") << s.last;
    EXPECT_EQ(l.step_at(origin->marks.begin()->first), 44) << s.last;
}

// The simulator's NaN in layer 1's MLP output on rank 3 at step 35, with two micro-steps a step (a job the project
// makes itself): micro-steps folded, `m` apart, `/` by label, Space folds a layer, Enter at the cell.
TEST(TuiLayers, a_simulated_nan_with_micro_steps_filters_folds_and_charts_at_its_step) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    LayersSession s;
    ASSERT_EQ(run({program("msmon"), "simulate", s.tmp / "job", "--ranks", "4", "--steps", "50", "--xy", "--faults",
                   "nan@35:r3"})
                  .exit_code,
              0);
    ASSERT_TRUE(s.open(s.tmp / "job", 170, 60)) << (s.tui ? s.tui->capture() : "");
    const std::string fc2 = "module.module.decoder.layers.1.mlp.linear_fc2.output";
    auto l = s.when([](const LayersScreen& l) { return contains(l.cursor, "(the top incident began here)"); });
    EXPECT_TRUE(contains(l.title, "rank 3  kind actv  op norm")) << s.last;
    EXPECT_TRUE(contains(l.cursor, "step 35, rank 3, " + fc2 + ": nan")) << s.last;
    ASSERT_TRUE(l.row(fc2)) << s.last;  // one row a tensor: its micro-steps folded
    EXPECT_FALSE(l.row(fc2 + ":0")) << s.last;
    const std::size_t folded_rows = l.rows.size();

    // `/layer=1 type=fc2`: layer 1's fc2 tensors only.
    s.tui->send_keys("/", true);
    s.tui->send_keys("layer=1 type=fc2", true);
    s.tui->send_keys("Enter");
    l = s.when([](const LayersScreen& l) { return contains(l.title, "/layer=1 type=fc2"); });
    ASSERT_FALSE(l.rows.empty()) << s.last;
    for (const auto& row : l.rows) EXPECT_TRUE(contains(row.label, "layers.1.mlp.linear_fc2")) << s.last;
    EXPECT_LT(l.rows.size(), folded_rows);
    EXPECT_TRUE(l.row(fc2)) << s.last;

    // `m`: each micro-step its own row (micro-step 1's rows follow micro-step 0's, as msprobe writes them).
    s.tui->send_keys("m", true);
    l = s.when([](const LayersScreen& l) { return contains(l.title, "micro-steps apart"); });
    EXPECT_TRUE(l.row(fc2 + ":0") && l.row(fc2 + ":1")) << s.last;
    EXPECT_FALSE(l.row(fc2)) << s.last;
    s.tui->send_keys("m", true);
    l = s.when([](const LayersScreen& l) { return !contains(l.title, "micro-steps apart"); });
    EXPECT_TRUE(l.row(fc2)) << s.last;
    // Enter on the origin's cell: the chart at step 35, rank 3 first.
    s.tui->send_keys("!", true);
    s.when([&](const LayersScreen& l) { return contains(l.cursor, "step 35, rank 3, " + fc2); });
    s.tui->send_keys("Enter");
    const std::string chart = s.tui->wait_for("step 35: rank 3=nan", milliseconds(15000));
    ASSERT_FALSE(chart.empty()) << s.tui->capture();
    EXPECT_TRUE(contains(chart, "actv norm " + fc2)) << chart;

    // Back; the filter off; Space on layer 1's row folds it into one row that keeps the origin's mark.
    s.tui->send_keys("Escape");
    s.when([](const LayersScreen& l) { return contains(l.title, "rank 3  kind actv"); });
    s.tui->send_keys("/", true);
    s.tui->send_keys("C-u");
    s.tui->send_keys("Enter");
    s.when([](const LayersScreen& l) { return !contains(l.title, "/layer="); });
    s.tui->send_keys(" ");
    l = s.when([](const LayersScreen& l) { return l.row("+") != nullptr; });  // "+ layers.1: N tensors"
    const auto lines = lines_of(s.last);
    bool folded = false;
    for (const auto& line : lines)
        if (contains(line, "+ layers.1: ") && contains(line, "◆")) folded = true;
    EXPECT_TRUE(folded) << s.last;
    EXPECT_FALSE(l.row(fc2)) << s.last;
}

// msprobe's own xy (micro-steps 0 and 1) and alert runs (../shared): a row per tensor, micro-steps apart on `m`.
TEST(TuiLayers, real_micro_step_runs_fold_their_micro_steps_and_show_them_apart_on_m) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    const std::string shared = shared_dir();
    if (shared.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real msprobe runs are not available");
    for (const char* run_name : {"xy", "alert"}) {
        TempDir tmp;
        const std::string job = shared + "/fixtures/msprobe-real/" + run_name;
        ASSERT_EQ(run({program("msmon"), "ingest", job, "--db", tmp / "store.db"}).exit_code, 0);
        TmuxSession t(program("msmon-tui") + " --db " + (tmp / "store.db"), 120, 40, tmux_env(tmp));
        ASSERT_FALSE(t.wait_for(" 7 Layers", milliseconds(20000)).empty()) << t.capture();
        t.send_keys("7", true);
        const auto ok = [](const std::string& screen) { return contains(screen, "kind actv  op norm"); };
        auto l = read_layers(t.screen_when(ok, milliseconds(15000)));
        ASSERT_TRUE(l.row("embed.output")) << run_name << "\n" << t.capture();
        EXPECT_FALSE(l.row("embed.output:0")) << run_name;
        t.send_keys("m", true);
        l = read_layers(t.screen_when([](const std::string& screen) { return contains(screen, "micro-steps apart"); },
                                      milliseconds(15000)));
        EXPECT_TRUE(l.row("embed.output:0")) << run_name << "\n" << t.capture();
        if (std::string(run_name) == "xy") {
            EXPECT_TRUE(l.row("embed.output:1")) << t.capture();
        }
    }
}

// A derived kind in the Layers tab: every gradient x100 at step 30 (2 ranks) shows as each layer's gradient norm
// jumping about 100x its last 8 steps, at the step the incident points to.
TEST(TuiLayers, the_layers_gradient_norm_is_a_kind_of_its_own_and_shows_a_gradient_spike) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    LayersSession s;
    ASSERT_EQ(
        run({program("msmon"), "simulate", s.tmp / "job", "--ranks", "2", "--steps", "50", "--faults", "spike@30"})
            .exit_code,
        0);
    ASSERT_TRUE(s.open(s.tmp / "job", 120, 30)) << (s.tui ? s.tui->capture() : "");
    s.when([](const LayersScreen& l) { return contains(l.title, "kind "); });
    LayersScreen l;
    for (int i = 0; i < 12 && !contains(l.title, "kind derived.layer_grad"); ++i) {
        const std::string before = read_layers(s.tui->capture()).title;
        s.tui->send_keys("[", true);
        l = s.when([&](const LayersScreen& now) { return now.title != before; });
    }
    ASSERT_TRUE(contains(l.title, "kind derived.layer_grad  op norm")) << s.last;
    EXPECT_EQ(l.rows.size(), 3u) << s.last;  // the simulator's three layers
    ASSERT_FALSE(l.rows.empty());
    EXPECT_EQ(l.rows[0].label, "module.module.decoder.layers.0") << s.last;
    const std::regex ratio(
        R"(step 30, rank \d, module\.module\.decoder\.layers\.0: \S+ = ([0-9.]+)x its last 8 steps)");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(l.cursor, m, ratio)) << s.last;
    EXPECT_GT(std::stod(m[1]), 30) << s.last;
}

// 80x24 in ASCII without colour: the origin's mark is '@', names keep their layer and module, the read-out fits.
TEST(TuiLayers, at_80x24_in_ascii_the_origin_is_marked_and_names_keep_their_layer) {
    const std::string shared = shared_dir();
    if (shared.empty())
        MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real msprobe fault runs are not available");
    TempDir tmp;
    ASSERT_EQ(
        run({program("msmon"), "ingest", shared + "/fixtures/msprobe-faults/nan", "--db", tmp / "store.db"}).exit_code,
        0);
    auto r = run({program("msmon-tui"), "--db", tmp / "store.db", "--snapshot", "layers", "--size", "80x24"},
                 {{"LANG", "C"}, {"LC_ALL", "C"}, {"NO_COLOR", "1"}, {"XDG_STATE_HOME", tmp / "state"}});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    bool origin = false;
    for (const auto& line : lines_of(r.out)) {
        for (unsigned char c : line) ASSERT_LT(c, 0x80) << line;
        if (line.rfind("module.layers.0.fc2.output ", 0) == 0 && contains(line, "@")) origin = true;
    }
    EXPECT_TRUE(origin) << r.out;
    EXPECT_TRUE(contains(r.out, "step 11, rank 3, module.layers.0.fc2.output: nan")) << r.out;
}

}  // namespace
}  // namespace msmon::test
