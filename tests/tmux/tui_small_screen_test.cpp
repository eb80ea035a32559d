// The Anomalies tab at 80x24 in a real terminal (a screen that tells the truth at every size): rules
// read exactly as `msmon anomalies` prints them (no TUI-only short forms), an origin still names its layer when the
// rule is long, and the selected anomaly's message wraps whole into the detail pane instead of being cut at the
// right edge.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

std::string squeezed(const std::string& s) {
    std::string out;
    for (char c : s)
        if (c != ' ' || (!out.empty() && out.back() != ' ')) out.push_back(c);
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
}

class TuiSmallScreen : public ::testing::Test {
protected:
    void SetUp() override {
        if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    }
    // A simulated job ingested, and what `msmon anomalies --format json` says of it.
    nlohmann::json make_job(const std::vector<std::string>& simulate_args) {
        std::vector<std::string> args = {program("msmon"), "simulate", tmp_ / "job", "--ranks", "8", "--steps", "60"};
        args.insert(args.end(), simulate_args.begin(), simulate_args.end());
        auto sim = run(args);
        EXPECT_EQ(sim.exit_code, 0) << sim.err;
        auto ingest = run({program("msmon"), "ingest", tmp_ / "job", "--db", tmp_ / "store.db"});
        EXPECT_EQ(ingest.exit_code, 0) << ingest.err;
        auto cli = run({program("msmon"), "anomalies", "--db", tmp_ / "store.db", "--format", "json"});
        EXPECT_EQ(cli.exit_code, 0) << cli.err;
        return nlohmann::json::parse(cli.out);
    }
    std::unique_ptr<TmuxSession> open_anomalies() {
        auto t = std::make_unique<TmuxSession>(
            program("msmon-tui") + " " + (tmp_ / "job") + " --db " + (tmp_ / "store.db"), 80, 24,
            std::map<std::string, std::string>{{"LANG", "C.UTF-8"},
                                               {"LC_ALL", "C.UTF-8"},
                                               {"TERM", "xterm-256color"},
                                               {"XDG_STATE_HOME", tmp_ / "state"},
                                               {"XDG_CACHE_HOME", tmp_ / "cache"}});
        EXPECT_FALSE(t->wait_for("incident", milliseconds(20000)).empty()) << t->capture();
        t->send_keys("3", true);
        EXPECT_FALSE(t->wait_for("incidents, most severe first", milliseconds(15000)).empty()) << t->capture();
        return t;
    }
    TempDir tmp_;
};

TEST_F(TuiSmallScreen, rules_read_as_the_cli_prints_them_and_a_long_rule_leaves_the_origin_its_layer) {
    const auto cli = make_job({"--logs", "--faults", "spike@20,baddata@30:r1x25"});
    std::set<std::string> cli_rules;
    std::string outlier_name;
    for (const auto& a : cli) {
        cli_rules.insert(a["rule"].get<std::string>());
        if (a["rule"] == "CrossRankOutlier" && a.value("origin", false)) outlier_name = a["name"];
    }
    ASSERT_TRUE(cli_rules.count("CrossRankOutlier") && cli_rules.count("GlobalNormSpike")) << cli.dump(1);
    ASSERT_NE(outlier_name.find("layers.1."), std::string::npos) << outlier_name;
    auto t = open_anomalies();
    // Incidents: the outlier's row says CrossRankOutlier whole, and its origin still says layers.1.
    std::string screen = t->screen_when(
        [](const std::string& s) { return s.find(" CrossRankOutlier ") != std::string::npos; }, milliseconds(15000));
    std::string row;
    for (const auto& l : lines_of(screen))
        if (l.find(" CrossRankOutlier ") != std::string::npos) row = l;
    ASSERT_FALSE(row.empty()) << screen;
    EXPECT_NE(row.find("layers.1."), std::string::npos) << "the origin lost its layer:\n" << screen;
    // Every anomaly, ranked: each rule in the rule column is one the CLI prints.
    t->send_keys("i", true);
    screen = t->wait_for("every anomaly", milliseconds(15000));
    ASSERT_FALSE(screen.empty()) << t->capture();
    std::set<std::string> seen;
    for (const auto& l : lines_of(screen)) {
        long long step = 0;
        int rank = 0;
        char rule[64] = "";
        if (l.size() > 1 && std::sscanf(l.c_str() + 1, "%lld %d %63s", &step, &rank, rule) == 3) seen.insert(rule);
    }
    ASSERT_FALSE(seen.empty()) << screen;
    // And every tensor name of a layer keeps the layer's number at 80 columns (layers.0 and layers.1 read apart).
    const std::regex layer_cut(R"(layers(?!\.\d+\.))");
    int layer_rows = 0;
    for (const auto& l : lines_of(screen))
        if (l.find("layers") != std::string::npos) {
            ++layer_rows;
            EXPECT_FALSE(std::regex_search(l, layer_cut)) << "a layer's number cut away: " << l;
        }
    EXPECT_GT(layer_rows, 0) << screen;
    for (const auto& r : seen)
        EXPECT_TRUE(cli_rules.count(r)) << "'" << r << "' is not a rule msmon prints\n" << screen;
}

TEST_F(TuiSmallScreen, the_selected_anomaly_s_message_wraps_whole_into_the_detail_pane) {
    const auto cli = make_job({"--xy", "--faults", "spike@20,nan@35:r3"});
    std::string message;
    for (const auto& a : cli)
        if (a["incident"] == 1 && a.value("origin", false)) message = a["message"];
    ASSERT_GT(message.size(), 160u) << "a message longer than two lines of 80 columns: " << message;
    auto t = open_anomalies();
    // The detail pane: the lines under the rule across the screen, before the module and code lines.
    const std::string screen = t->screen_when(
        [](const std::string& s) {
            return s.find("module:") != std::string::npos || s.find("module ") != std::string::npos;
        },
        milliseconds(15000));
    const auto lines = lines_of(screen);
    std::string detail;
    bool below_rule = false;
    for (const auto& l : lines) {
        if (l.rfind("\u2500\u2500\u2500\u2500", 0) == 0) {
            below_rule = true;
            continue;
        }
        if (!below_rule) continue;
        if (l.rfind("module", 0) == 0) break;
        detail += l + " ";
    }
    EXPECT_EQ(squeezed(detail), squeezed(message)) << screen;
}

// Enter on the spike's incident (rank 0, step 20) at 80 columns: the read-out under the title starts with rank 0's
// value, and of the other 7 ranks shows each value whole or counts the ones left out ("+3"), never half a value.
TEST_F(TuiSmallScreen, the_chart_read_out_keeps_the_focused_rank_and_cuts_no_value) {
    make_job({"--xy", "--faults", "spike@20,nan@35:r3"});
    auto t = open_anomalies();
    t->send_keys("j", true);
    t->send_keys("Enter");
    const std::string screen = t->wait_for("step 20: rank 0=", milliseconds(15000));
    ASSERT_FALSE(screen.empty()) << t->capture();
    std::string readout;
    for (const auto& l : lines_of(screen))
        if (l.rfind("step 20: rank 0=", 0) == 0) readout = l;
    std::istringstream in(readout.substr(std::string("step 20: rank 0=").size()));
    std::string focused, token;
    in >> focused;
    char* end = nullptr;
    std::strtod(focused.c_str(), &end);
    EXPECT_TRUE(!focused.empty() && *end == '\0') << "rank 0's value: " << readout;
    int shown = 0, left_out = 0;
    while (in >> token) {
        if (token[0] == '+') {
            left_out = std::stoi(token.substr(1));
            EXPECT_FALSE(in >> token) << "the count of ranks left out ends the read-out: " << readout;
            break;
        }
        const auto eq = token.find('=');
        ASSERT_NE(eq, std::string::npos) << "a value cut: '" << token << "' in " << readout;
        std::strtod(token.c_str() + eq + 1, &end);
        EXPECT_EQ(*end, '\0') << token << " in " << readout;
        ++shown;
    }
    EXPECT_EQ(shown + left_out, 7) << readout;
    EXPECT_GE(shown, 3) << readout;
}

// A command's answer, the incidents and a malformed line on one 80-column status line: the rate and the folder give
// way, not what went wrong.
TEST_F(TuiSmallScreen, the_status_line_keeps_the_answer_the_incidents_and_the_malformed_count) {
    make_job({"--xy", "--faults", "spike@20,nan@35:r3"});
    std::string csv;
    for (const auto& e : std::filesystem::recursive_directory_iterator(tmp_ / "job"))
        if (e.path().extension() == ".csv" && e.path().filename().string().rfind("grad_reduced", 0) == 0)
            csv = e.path().string();
    ASSERT_FALSE(csv.empty());
    {
        std::ofstream out(csv, std::ios::app);
        out << "0,module.broken,not-a-step,1,2,3\n";
    }
    auto t = open_anomalies();
    std::string screen =
        t->screen_when([](const std::string& s) { return lines_of(s).back().find("1 malformed") != std::string::npos; },
                       milliseconds(20000));
    ASSERT_NE(lines_of(screen).back().find("1 malformed"), std::string::npos) << screen;
    t->send_keys(":", true);
    t->send_keys("rank 77", true);
    t->send_keys("Enter");
    screen =
        t->screen_when([](const std::string& s) { return lines_of(s).back().find("no rank 77") != std::string::npos; },
                       milliseconds(15000));
    const std::string status = lines_of(screen).back();
    EXPECT_NE(status.find("no rank 77"), std::string::npos) << screen;
    EXPECT_NE(status.find("| 2 incidents"), std::string::npos) << status;
    EXPECT_NE(status.find("| 1 malformed"), std::string::npos) << status;
}

// Log-y on gradients' minima (all negative) at 80 columns: the chart says why it draws nothing instead of an empty
// frame; on means of both signs it says how many values it left out; linear again, the title says nothing of it.
TEST_F(TuiSmallScreen, log_y_on_values_at_or_below_zero_says_so) {
    make_job({"--faults", "spike@20"});
    auto t = std::make_unique<TmuxSession>(program("msmon-tui") + " --db " + (tmp_ / "store.db"), 80, 24,
                                           std::map<std::string, std::string>{{"LANG", "C.UTF-8"},
                                                                              {"LC_ALL", "C.UTF-8"},
                                                                              {"TERM", "xterm-256color"},
                                                                              {"XDG_STATE_HOME", tmp_ / "state"},
                                                                              {"XDG_CACHE_HOME", tmp_ / "cache"}});
    ASSERT_FALSE(t->wait_for("steps 0-59", milliseconds(20000)).empty()) << t->capture();
    t->send_keys("2", true);
    t->send_keys(":", true);
    t->send_keys("op min", true);
    t->send_keys("Enter");
    ASSERT_FALSE(t->wait_for("grad_reduced min", milliseconds(15000)).empty()) << t->capture();
    t->send_keys("L", true);
    std::string screen = t->wait_for("every value here is <= 0", milliseconds(15000));
    ASSERT_FALSE(screen.empty()) << t->capture();
    EXPECT_NE(screen.find("(L: linear)"), std::string::npos) << screen;
    t->send_keys(":", true);
    t->send_keys("op mean", true);
    t->send_keys("Enter");
    screen = t->wait_for("values <= 0 not drawn)", milliseconds(15000));
    ASSERT_FALSE(screen.empty()) << t->capture();
    t->send_keys("L", true);
    screen =
        t->screen_when([](const std::string& s) { return s.find("log-y") == std::string::npos; }, milliseconds(15000));
    EXPECT_EQ(screen.find("log-y"), std::string::npos) << screen;
    EXPECT_NE(screen.find("grad_reduced mean"), std::string::npos) << screen;
}

}  // namespace
}  // namespace msmon::test
