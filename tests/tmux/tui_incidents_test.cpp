// Incidents in the TUI (find what went wrong), in a real terminal: the Anomalies tab opens on one
// row per incident, most severe first, each showing where it began; Space lists an incident's anomalies (its
// origin first, then in training order); Enter charts the origin (or the anomaly) on its rank at its step,
// and Esc comes back to the same row, still expanded; the status line counts incidents. On a simulated run (a
// spike on every rank at step 20, a NaN on rank 3 at step 35) and on a real msprobe run with a NaN
// (../shared).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <regex>
#include <sstream>
#include <tuple>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

std::map<std::string, std::string> tui_env(const TempDir& tmp, const std::string& lang = "C.UTF-8") {
    return {{"LANG", lang},
            {"LC_ALL", lang},
            {"TERM", "xterm-256color"},
            {"XDG_STATE_HOME", tmp / "state"},
            {"XDG_CACHE_HOME", tmp / "cache"}};
}

std::string status_line(const std::string& screen) {
    const auto lines = lines_of(screen);
    return lines.empty() ? "" : lines.back();
}

// A row of the incidents list as seen: an incident ("▸"/"▾" after the selection mark) or, under an expanded
// one, one of its anomalies ("├"/"└").
struct IncidentLine {
    std::string line;
    bool selected = false, member = false, expanded = false;
    long long step = -1;
    int rank = -1;
    std::string kind, rule, name;
    int anomalies = -1, ranks = -1;
};

std::vector<IncidentLine> incident_lines(const std::string& screen) {
    static const std::regex incident(R"(^([> ])(▸|▾) *(\d+) +(\d+) +(\S+) +(\S+) +(\d+) +(\d+) +(\S+) +(\S+)\s*$)");
    static const std::regex member(R"(^([> ]) (├|└) *(\d+) +(\d+) +(\S+) +(\S+) +.* (\S+)\s*$)");
    std::vector<IncidentLine> out;
    for (const auto& l : lines_of(screen)) {
        std::smatch m;
        IncidentLine row;
        if (std::regex_match(l, m, incident)) {
            row.expanded = m[2] == "▾";
            row.anomalies = std::stoi(m[7]);
            row.ranks = std::stoi(m[8]);
            row.name = m[10];
        } else if (std::regex_match(l, m, member)) {
            row.member = true;
            row.name = m[7];
        } else {
            continue;
        }
        row.line = l;
        row.selected = m[1] == ">";
        row.step = std::stoll(m[3]);
        row.rank = std::stoi(m[4]);
        row.kind = m[5];
        row.rule = m[6];
        out.push_back(row);
    }
    return out;
}

IncidentLine selected_row(const std::string& screen) {
    for (const auto& r : incident_lines(screen))
        if (r.selected) return r;
    return {};
}

std::size_t count_incidents(const std::vector<IncidentLine>& rows) {
    return static_cast<std::size_t>(
        std::count_if(rows.begin(), rows.end(), [](const IncidentLine& r) { return !r.member; }));
}

// One key, then the screen once the selection moved (a key still queued in a slow TUI would carry it past).
std::string press_and_see_move(TmuxSession& t, const std::string& key) {
    const std::string before = selected_row(t.capture()).line;
    t.send_keys(key, true);
    return t.screen_when([&](const std::string& s) { return selected_row(s).line != before; }, milliseconds(3000));
}

// Where a kind is produced in a training step (core/detect/step_order.hpp), for the members' order.
int kind_order(const std::string& kind) {
    static const std::vector<std::string> order = {"actv",         "actv_grad", "grad_unreduced",
                                                   "grad_reduced", "exp_avg",   "exp_avg_sq"};
    for (std::size_t i = 0; i < order.size(); ++i)
        if (kind == order[i] || (order[i].size() > 12 && kind == order[i].substr(0, 12))) return static_cast<int>(i);
    return 7;
}

// Expanded: the first member is the incident's origin, the rest follow in training order.
void expect_members_in_training_order(const std::vector<IncidentLine>& rows, const IncidentLine& incident) {
    std::vector<IncidentLine> members;
    for (const auto& r : rows)
        if (r.member) members.push_back(r);
    ASSERT_FALSE(members.empty());
    EXPECT_EQ(members[0].step, incident.step);
    EXPECT_EQ(members[0].rank, incident.rank);
    EXPECT_EQ(members[0].kind, incident.kind);
    EXPECT_EQ(members[0].name, incident.name);
    for (std::size_t i = 2; i < members.size(); ++i) {
        const auto& a = members[i - 1];
        const auto& b = members[i];
        EXPECT_LE(std::make_tuple(a.step, kind_order(a.kind)), std::make_tuple(b.step, kind_order(b.kind)))
            << a.line << "\n"
            << b.line;
    }
}

class TuiIncidents : public ::testing::Test {
protected:
    void SetUp() override {
        if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    }
    // The run ingested first (a live TUI would show the incidents growing as ranks arrive), then the TUI on
    // it.
    std::unique_ptr<TmuxSession> open(const std::string& dir, const std::string& steps) {
        auto ingest = run({program("msmon"), "ingest", dir, "--db", tmp_ / "store.db"}, tui_env(tmp_));
        EXPECT_EQ(ingest.exit_code, 0) << ingest.err;
        auto t = std::make_unique<TmuxSession>(program("msmon-tui") + " " + dir + " --db " + (tmp_ / "store.db"), 120,
                                               40, tui_env(tmp_));
        EXPECT_FALSE(t->wait_for("steps " + steps, milliseconds(15000)).empty()) << t->capture();
        return t;
    }
    TempDir tmp_;
};

TEST_F(TuiIncidents, a_spike_and_a_nan_are_two_incidents_each_charted_from_its_origin_and_esc_returns_to_the_row) {
    const std::string job = tmp_ / "job";
    // Activations on (--xy): the NaN is planted in layer 1's fc2 output on rank 3 (the simulator's default
    // module).
    auto sim = run(
        {program("msmon"), "simulate", job, "--ranks", "8", "--steps", "60", "--xy", "--faults", "spike@20,nan@35:r3"});
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    auto t = open(job, "0-59");
    // The status line counts incidents, not the 106 anomalies they group.
    std::string screen =
        t->screen_when([](const std::string& s) { return status_line(s).find("| 2 incidents |") != std::string::npos; },
                       milliseconds(10000));
    ASSERT_NE(status_line(screen).find("| 2 incidents |"), std::string::npos) << screen;
    EXPECT_EQ(status_line(screen).find("anomalies"), std::string::npos) << screen;
    // The Overview marks every rank the spike reached ("!"): all eight.
    static const std::regex marked(R"(^!(\d+) +\S)");
    int marks = 0;
    for (const auto& l : lines_of(screen)) marks += std::regex_search(l, marked);
    EXPECT_EQ(marks, 8) << screen;

    t->send_keys("3", true);
    screen = t->screen_when([](const std::string& s) { return count_incidents(incident_lines(s)) == 2; },
                            milliseconds(5000));
    auto rows = incident_lines(screen);
    ASSERT_EQ(rows.size(), 2u) << screen;
    EXPECT_EQ(lines_of(screen)[1].rfind("incidents, most severe first  2 incidents, 106 anomalies", 0), 0u) << screen;
    // The NaN first (the most severe), where it began: layer 1's fc2 output on rank 3 at step 35; what
    // follows from it (the modules after it, the gradients, every rank after the all-reduce, step 36) is in
    // it.
    const IncidentLine nan = rows[0];
    EXPECT_TRUE(nan.selected) << screen;
    EXPECT_FALSE(nan.expanded);
    EXPECT_EQ(nan.step, 35);
    EXPECT_EQ(nan.rank, 3);
    EXPECT_EQ(nan.kind, "actv");
    EXPECT_EQ(nan.rule, "NonFinite");
    EXPECT_EQ(nan.name, "module.module.decoder.layers.1.mlp.linear_fc2.output");
    EXPECT_EQ(nan.anomalies, 66);
    EXPECT_EQ(nan.ranks, 8);
    // The spike: 40 anomalies on 8 ranks at steps 20-21 (Adam's moments follow at 21), beginning with rank
    // 0's loss gradient (the first activation gradient backward computes).
    const IncidentLine spike = rows[1];
    EXPECT_EQ(spike.step, 20);
    EXPECT_EQ(spike.rank, 0);
    EXPECT_EQ(spike.kind, "actv_grad");
    EXPECT_EQ(spike.rule, "Jump");
    EXPECT_EQ(spike.anomalies, 40);
    EXPECT_EQ(spike.ranks, 8);
    EXPECT_NE(spike.line.find(" 20-21 "), std::string::npos) << spike.line;
    // The detail pane: the origin's message.
    EXPECT_NE(screen.find("became non-finite at step 35 on rank 3"), std::string::npos) << screen;

    // Enter on the NaN incident: the chart of its origin's tensor, rank 3 focused, the cursor at step 35.
    t->send_keys("Enter");
    screen = t->wait_for("step 35: rank 3=", milliseconds(5000));
    ASSERT_FALSE(screen.empty()) << "the chart is not on rank 3 at step 35:\n" << t->capture();
    EXPECT_EQ(lines_of(screen)[1].rfind("actv nans", 0), 0u) << screen;
    t->send_keys("Escape");
    screen = t->screen_when([&](const std::string& s) { return selected_row(s).line == nan.line; }, milliseconds(3000));
    EXPECT_EQ(selected_row(screen).line, nan.line) << screen;

    // Space on the spike: its anomalies, the origin first, then in training order.
    press_and_see_move(*t, "j");
    t->send_keys(" ", true);
    // Waits for the whole list: under ASan a capture can land while the expanded rows are still being drawn.
    screen = t->screen_when([](const std::string& s) { return incident_lines(s).size() > 20; }, milliseconds(5000));
    rows = incident_lines(screen);
    ASSERT_GT(rows.size(), 20u) << screen;
    EXPECT_EQ(rows[0].line.substr(1), nan.line.substr(1));  // no longer selected
    EXPECT_TRUE(rows[1].expanded && rows[1].selected) << screen;
    expect_members_in_training_order(rows, spike);
    for (std::size_t i = 2; i < rows.size(); ++i)
        EXPECT_TRUE(rows[i].member && (rows[i].step == 20 || rows[i].step == 21)) << rows[i].line;

    // Enter on a member (rank 5's): that anomaly charted; Esc: the same member row, the incident still open.
    for (int i = 0; i < 40 && !(selected_row(screen).member && selected_row(screen).rank == 5); ++i)
        screen = press_and_see_move(*t, "j");
    const IncidentLine member = selected_row(screen);
    ASSERT_TRUE(member.member && member.rank == 5) << screen;
    t->send_keys("Enter");
    ASSERT_FALSE(t->wait_for("step 20: rank 5=", milliseconds(5000)).empty()) << t->capture();
    t->send_keys("Escape");
    screen =
        t->screen_when([&](const std::string& s) { return selected_row(s).line == member.line; }, milliseconds(3000));
    EXPECT_EQ(selected_row(screen).line, member.line) << screen;
    // Still expanded: member rows on screen (how many fit depends on the detail pane, which grows when the
    // member's module structure has been read).
    const auto after = incident_lines(screen);
    EXPECT_GT(std::count_if(after.begin(), after.end(), [](const IncidentLine& l) { return l.member; }), 5) << screen;

    // Space on a member closes its incident and selects the incident's row.
    t->send_keys(" ", true);
    screen = t->screen_when([](const std::string& s) { return incident_lines(s).size() == 2; }, milliseconds(3000));
    ASSERT_EQ(incident_lines(screen).size(), 2u) << screen;
    EXPECT_EQ(selected_row(screen).line.substr(1), spike.line.substr(1)) << screen;  // the '>' aside

    // i: every anomaly, the spike's origin selected there too; i again: back to the incidents.
    t->send_keys("i", true);
    screen = t->wait_for("sort rank  grouped", milliseconds(3000));
    ASSERT_FALSE(screen.empty()) << t->capture();
    t->send_keys("i", true);
    screen = t->screen_when(
        [&](const std::string& s) {
            return selected_row(s).line.substr(std::min<std::size_t>(1, selected_row(s).line.size())) ==
                   spike.line.substr(1);
        },
        milliseconds(3000));
    EXPECT_EQ(selected_row(screen).line.substr(std::min<std::size_t>(1, selected_row(screen).line.size())),
              spike.line.substr(1))
        << screen;
}

TEST_F(TuiIncidents, a_real_msprobe_nan_is_one_incident_from_layer_0_fc2_on_rank_3_at_step_11) {
    const std::string shared = shared_dir();
    if (shared.empty())
        MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real msprobe fault runs are not available");
    auto t = open(shared + "/fixtures/msprobe-faults/nan", "0-49");
    std::string screen =
        t->screen_when([](const std::string& s) { return status_line(s).find("| 1 incident |") != std::string::npos; },
                       milliseconds(10000));
    ASSERT_NE(status_line(screen).find("| 1 incident |"), std::string::npos) << screen;
    t->send_keys("3", true);
    screen = t->screen_when([](const std::string& s) { return count_incidents(incident_lines(s)) == 1; },
                            milliseconds(5000));
    const auto rows = incident_lines(screen);
    ASSERT_EQ(rows.size(), 1u) << screen;
    const IncidentLine inc = rows[0];
    EXPECT_TRUE(inc.selected);
    EXPECT_EQ(inc.step, 11);
    EXPECT_EQ(inc.rank, 3);
    EXPECT_EQ(inc.kind, "actv");
    EXPECT_EQ(inc.rule, "NonFinite");
    EXPECT_EQ(inc.name, "module.layers.0.fc2.output");
    EXPECT_EQ(inc.anomalies, 25);
    EXPECT_EQ(inc.ranks, 4);
    EXPECT_NE(inc.line.find(" 11-12 "), std::string::npos) << inc.line;
    // Expanded: all 25 anomalies fit, the origin first.
    t->send_keys(" ", true);
    screen = t->screen_when([](const std::string& s) { return incident_lines(s).size() == 26; }, milliseconds(3000));
    ASSERT_EQ(incident_lines(screen).size(), 26u) << screen;
    expect_members_in_training_order(incident_lines(screen), inc);
    const IncidentLine open_row = selected_row(screen);
    EXPECT_TRUE(open_row.expanded && !open_row.member) << screen;
    // Enter on the incident: its origin charted, rank 3 at step 11; Esc: the same row, still expanded.
    t->send_keys("Enter");
    screen = t->wait_for("step 11: rank 3=", milliseconds(5000));
    ASSERT_FALSE(screen.empty()) << t->capture();
    EXPECT_EQ(lines_of(screen)[1].rfind("actv ", 0), 0u) << screen;
    t->send_keys("Escape");
    screen = t->screen_when(
        [&](const std::string& s) { return selected_row(s).line == open_row.line && incident_lines(s).size() == 26; },
        milliseconds(3000));
    EXPECT_EQ(selected_row(screen).line, open_row.line) << screen;
    EXPECT_EQ(incident_lines(screen).size(), 26u) << screen;
}

// Silent data corruption of one replica (sdc-weight: rank 1's copy of layers.0.fc2.weight altered after step 30's
// update): the Anomalies tab leads with it, and Enter charts rank 1's weight at step 31 with its replicas' value
// beside it in the read-out.
TEST_F(TuiIncidents, a_replica_altered_between_steps_is_charted_against_its_replicas_value) {
    const std::string shared = shared_dir();
    if (shared.empty())
        MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real msprobe fault runs are not available");
    auto t = open(shared + "/fixtures/msprobe-faults/sdc-weight", "0-49");
    std::string screen =
        t->screen_when([](const std::string& s) { return status_line(s).find("| 1 incident |") != std::string::npos; },
                       milliseconds(10000));
    ASSERT_NE(status_line(screen).find("| 1 incident |"), std::string::npos) << screen;
    t->send_keys("3", true);
    screen = t->screen_when([](const std::string& s) { return count_incidents(incident_lines(s)) == 1; },
                            milliseconds(5000));
    const auto rows = incident_lines(screen);
    ASSERT_EQ(rows.size(), 1u) << screen;
    EXPECT_TRUE(rows[0].selected);
    EXPECT_EQ(rows[0].step, 31);
    EXPECT_EQ(rows[0].rank, 1);
    EXPECT_EQ(rows[0].kind, "param_origin");
    EXPECT_EQ(rows[0].name, "module.layers.0.fc2.weight");
    EXPECT_EQ(rows[0].ranks, 1);
    t->send_keys("Enter");
    // The read-out's 6 significant digits: 2.487534 against 2.462905.
    screen = t->wait_for("step 31: rank 1=2.48753 replicas 0,2-3=2.46291", milliseconds(5000));
    ASSERT_FALSE(screen.empty()) << t->capture();
    const auto lines = lines_of(screen);
    EXPECT_EQ(lines[1].rfind("param_origin norm", 0), 0u) << screen;
    EXPECT_NE(lines[1].find("module.layers.0.fc2.weight"), std::string::npos) << screen;
    EXPECT_NE(lines[1].find("against its replicas 0,2-3"), std::string::npos) << screen;
    // The Layers tab at the origin ('!'), then one step fixed ('d'): rank 1's cell of layers.0.fc2.weight is where
    // the incident began, among the 4 ranks' cells.
    // Each key once the tab has read what it acts on: '!' before the tab's first read finds no incident to go to.
    t->send_keys("7");
    ASSERT_FALSE(t->wait_for("40 tensors", milliseconds(5000)).empty()) << t->capture();
    t->send_keys("!", true);
    ASSERT_FALSE(t->wait_for("kind param_origin", milliseconds(5000)).empty()) << t->capture();
    t->send_keys("d", true);
    screen = t->wait_for("step 31  kind param_origin  op norm", milliseconds(5000));
    ASSERT_FALSE(screen.empty()) << t->capture();
    // Columns in code points: the mark (3 bytes in UTF-8) sits in rank 1's column.
    const auto column = [](const std::string& line, const std::string& what) {
        const auto at = line.find(what);
        if (at == std::string::npos) return -1;
        int cols = 0;
        for (std::size_t i = 0; i < at; ++i) cols += (static_cast<unsigned char>(line[i]) & 0xC0) != 0x80;
        return cols;
    };
    int mark = -1, rank1 = -1, marks = 0;
    for (const auto& l : lines_of(screen)) {
        if (l.find("\u25c6") != std::string::npos) ++marks;
        if (l.rfind("module.layers.0.fc2.weight ", 0) == 0) mark = column(l, "\u25c6");
        if (l.find(" r0  r1  r2  r3") != std::string::npos) rank1 = column(l, "r1");
    }
    EXPECT_GE(mark, 0) << screen;
    EXPECT_EQ(mark, rank1) << screen;
    EXPECT_EQ(marks, 2) << "the cell and the legend: " << screen;
}

// --snapshot anomalies at 80x24: the incidents readable, the module cut so the layer and fc2 still show.
TEST(TuiIncidentsSnapshot, incidents_are_readable_at_80x24_in_utf8_and_ascii) {
    TempDir tmp;
    ASSERT_EQ(run({program("msmon"), "simulate", tmp / "job", "--ranks", "8", "--steps", "60", "--xy", "--faults",
                   "spike@20,nan@35:r3"})
                  .exit_code,
              0);
    for (const std::string lang : {"C.UTF-8", "C"}) {
        auto r = run(
            {program("msmon-tui"), tmp / "job", "--db", tmp / "store.db", "--snapshot", "anomalies", "--size", "80x24"},
            tui_env(tmp, lang));
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const auto lines = lines_of(r.out);
        ASSERT_EQ(lines.size(), 24u) << r.out;
        for (const auto& l : lines) {
            std::size_t cols = 0;
            for (unsigned char c : l) cols += (c & 0xC0) != 0x80;
            EXPECT_LE(cols, 80u) << l;
            if (lang == "C") {
                for (unsigned char c : l) EXPECT_LT(c, 0x80) << l;
            }
        }
        const bool utf8 = lang != "C";
        EXPECT_EQ(lines[1], "incidents, most severe first  2 incidents, 106 anomalies") << r.out;
        EXPECT_EQ(lines[3], std::string(utf8 ? ">\u25B8" : ">+") +
                                "    35    3 actv         NonFinite    66     8 35-36   " +
                                (utf8 ? "\u2026layers.1.\u2026r_fc2.output" : "~layers.1.~r_fc2.output"))
            << r.out;
        EXPECT_EQ(lines[4].substr(0, utf8 ? 4 : 2), utf8 ? " \u25B8" : " +") << r.out;
        EXPECT_NE(lines[4].find("    20    0 actv_grad    Jump         40     8 20-21   .output"), std::string::npos)
            << r.out;
        // The detail pane: the origin's message, the whole tensor name first, wrapped whole over three lines.
        EXPECT_EQ(lines[17], "actv module.module.decoder.layers.1.mlp.linear_fc2.output (micro step 0) became")
            << r.out;
        EXPECT_EQ(lines[18], "non-finite at step 35 on rank 3 (nans 1, was 0); 29 actv series of this rank in")
            << r.out;
        EXPECT_EQ(lines[19], "all, this one first in forward order") << r.out;
        EXPECT_EQ(lines[22].rfind("Enter chart  Space expand  i incidents or every anomaly  s sort", 0), 0u) << r.out;
        EXPECT_NE(lines[23].find(" | 2 incidents | "), std::string::npos) << r.out;
    }
}

}  // namespace
}  // namespace msmon::test
