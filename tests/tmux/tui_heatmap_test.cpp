// The Overview's heatmap on a 256-rank job in a real terminal: the selected rank's row is marked and
// labelled wherever j/k/G take it, a colour scale with its values heads the map, a step axis under it names the
// steps shown, h pans back through the run and 0 shows all of it, and v switches to the list and back.
#include <gtest/gtest.h>

#include <sstream>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

std::vector<std::string> words_of(const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

constexpr int kRanks = 256, kSteps = 120, kWidth = 100, kHeight = 30;
constexpr int kMapRows = kHeight - 6;    // tabs, title and scale above; axis, hint and status below
constexpr int kMapColumns = kWidth - 7;  // after the labels

// The screen row (from the map's first) where the heatmap draws the rank at position `pos` of 256.
int row_of(int pos) {
    int row = 0;
    for (int r = 0; r < kMapRows; ++r)
        if (r * kRanks / kMapRows <= pos) row = r;
    return row;
}

class TuiHeatmap : public ::testing::Test {
protected:
    void SetUp() override {
        if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
        auto sim = run({program("msmon"), "simulate", tmp_ / "job", "--ranks", std::to_string(kRanks), "--steps",
                        std::to_string(kSteps), "--params", "2"});
        ASSERT_EQ(sim.exit_code, 0) << sim.err;
        auto ingest = run({program("msmon"), "ingest", tmp_ / "job", "--db", tmp_ / "store.db"});
        ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
        t_ = std::make_unique<TmuxSession>(program("msmon-tui") + " --db " + (tmp_ / "store.db"), kWidth, kHeight,
                                           std::map<std::string, std::string>{{"LANG", "C.UTF-8"},
                                                                              {"LC_ALL", "C.UTF-8"},
                                                                              {"TERM", "xterm-256color"},
                                                                              {"XDG_STATE_HOME", tmp_ / "state"},
                                                                              {"XDG_CACHE_HOME", tmp_ / "cache"}});
    }
    // The map's line of screen row `row`, the axis line under the map, and the line above it.
    std::string map_line(const std::string& screen, int row) const { return lines_of(screen).at(3 + row); }
    std::string axis(const std::string& screen) const { return lines_of(screen).at(3 + kMapRows); }
    std::string head(const std::string& screen) const { return lines_of(screen).at(2); }
    std::string screen_with(const std::string& text) {
        std::string s = t_->wait_for(text, milliseconds(20000));  // generous: 256 ranks under the sanitizers
        EXPECT_FALSE(s.empty()) << "no '" << text << "' on:\n" << t_->capture();
        return s.empty() ? t_->capture() : s;
    }
    TempDir tmp_;
    std::unique_ptr<TmuxSession> t_;
};

TEST_F(TuiHeatmap, selection_scale_axis_pan_whole_run_and_the_list) {
    std::string screen = screen_with("ranks 0..255 (256, up to 11 a row)");
    // The colour scale's values, the selected rank (the first) marked on the first row.
    const auto scale = words_of(head(screen));
    ASSERT_GE(scale.size(), 7u) << head(screen);
    EXPECT_EQ(scale[scale.size() - 3], "colour") << head(screen);
    EXPECT_LT(std::stod(scale[scale.size() - 2]), std::stod(scale.back())) << head(screen);
    EXPECT_EQ(map_line(screen, 0).rfind(">r0", 0), 0u) << screen;
    // The axis: the latest steps, one a column, under the map's columns.
    const std::string first_shown = std::to_string(kSteps - kMapColumns), last = std::to_string(kSteps - 1);
    EXPECT_EQ(words_of(axis(screen)).front(), first_shown) << axis(screen);
    EXPECT_EQ(words_of(axis(screen)).back(), last) << axis(screen);
    EXPECT_EQ(axis(screen).find(first_shown), 7u) << axis(screen);
    EXPECT_EQ(axis(screen).size(), static_cast<std::size_t>(kWidth)) << "the last step ends at the right edge";

    // j x40: rank 40 marked on its row; G: rank 255 on the last.
    for (int i = 0; i < 40; ++i) t_->send_keys("j", true);
    screen = screen_with(">r40");
    EXPECT_EQ(map_line(screen, row_of(40)).rfind(">r40", 0), 0u) << screen;
    t_->send_keys("G", true);
    screen = screen_with(">r255");
    EXPECT_EQ(map_line(screen, row_of(255)).rfind(">r255", 0), 0u) << screen;

    // h: a quarter of the map earlier; the head says so.
    t_->send_keys("h", true);
    screen = screen_with("panned");
    const int shift = kMapColumns / 4;
    EXPECT_EQ(words_of(axis(screen)).back(), std::to_string(kSteps - 1 - shift)) << axis(screen);
    EXPECT_EQ(words_of(axis(screen)).front(), std::to_string(std::max(0, kSteps - kMapColumns - shift)))
        << axis(screen);
    // 0: the whole run on the map's width; l from there does nothing, 0 again follows the latest steps.
    t_->send_keys("0", true);
    screen = screen_with("whole run");
    EXPECT_EQ(words_of(axis(screen)).front(), "0") << axis(screen);
    EXPECT_EQ(words_of(axis(screen)).back(), last) << axis(screen);
    t_->send_keys("0", true);
    screen = t_->screen_when([&](const std::string& s) { return head(s).find("whole run") == std::string::npos; },
                             milliseconds(20000));
    EXPECT_EQ(words_of(axis(screen)).front(), first_shown) << axis(screen);

    // v: the list, with the selection kept; v: the heatmap again.
    t_->send_keys("v", true);
    screen = screen_with("rank   history");
    EXPECT_NE(screen.find("255"), std::string::npos) << screen;
    t_->send_keys("v", true);
    screen = screen_with("ranks 0..255 (256");
    EXPECT_EQ(map_line(screen, row_of(255)).rfind(">r255", 0), 0u) << screen;
}

}  // namespace
}  // namespace msmon::test
