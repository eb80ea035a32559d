// The Layers tab in a real terminal (issue 20): it opens on the rank where the top incident began, the rank's
// activations as rows in forward order and steps across; the first NaN mark is on the planted module's row at the
// planted step (the modules after it a step later); Enter charts that tensor on that rank.
#include <gtest/gtest.h>

#include <regex>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

// Where the Layers tab first marks a NaN: the row's label (its text before the map) and the step, read off the
// step axis (its first label is the first step, under the first column).
struct FirstMark {
    std::string row;
    long long step = -1;
};

FirstMark first_nan(const std::string& screen) {
    const auto lines = lines_of(screen);
    // The axis: the line under the rows holding only step numbers, indented to the map.
    const std::regex axis_line(R"(^ +\d+( +\d+)+ *$)");
    int axis = -1;
    for (int i = static_cast<int>(lines.size()) - 1; i > 2 && axis < 0; --i)
        if (std::regex_match(lines[i], axis_line)) axis = i;
    if (axis < 0) return {};
    const std::size_t x0 = lines[axis].find_first_not_of(' ');
    const long long step0 = std::stoll(lines[axis].substr(x0));
    FirstMark best;
    std::size_t best_x = std::string::npos;
    for (int i = 3; i < axis; ++i) {
        // Columns count characters; labels may hold multi-byte ellipses: count code points.
        std::size_t col = 0;
        for (std::size_t b = 0; b < lines[i].size(); ++b) {
            if ((static_cast<unsigned char>(lines[i][b]) & 0xC0) == 0x80) continue;
            if (lines[i][b] == '!' && col >= x0) {
                if (col < best_x) {
                    best_x = col;
                    best.row = lines[i].substr(0, lines[i].find(' '));
                    best.step = step0 + static_cast<long long>(col - x0);
                }
                break;
            }
            ++col;
        }
    }
    return best;
}

std::map<std::string, std::string> env_of(const TempDir& tmp) {
    return {{"LANG", "C.UTF-8"},
            {"LC_ALL", "C.UTF-8"},
            {"TERM", "xterm-256color"},
            {"XDG_STATE_HOME", tmp / "state"},
            {"XDG_CACHE_HOME", tmp / "cache"}};
}

// The simulator's NaN in layer 1's MLP output on rank 3 at step 35 (a job the project makes itself).
TEST(TuiLayers, a_simulated_nan_is_marked_first_on_its_module_at_its_step_and_enter_charts_it) {
    if (!TmuxSession::available()) GTEST_SKIP() << "tmux is not installed";
    TempDir tmp;
    ASSERT_EQ(run({program("msmon"), "simulate", tmp / "job", "--ranks", "4", "--steps", "50", "--xy", "--faults",
                   "nan@35:r3"})
                  .exit_code,
              0);
    // The run read whole first (live, the view shows what has been read: a look could come mid-file).
    ASSERT_EQ(run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "store.db"}).exit_code, 0);
    TmuxSession t(program("msmon-tui") + " --db " + (tmp / "store.db"), 170, 60, env_of(tmp));
    ASSERT_FALSE(t.wait_for("| 1 incident |", milliseconds(20000)).empty()) << t.capture();
    t.send_keys("7", true);
    const std::string screen = t.wait_for("rank 3  kind actv  op norm", milliseconds(15000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    const FirstMark mark = first_nan(screen);
    EXPECT_EQ(mark.row, "module.module.decoder.layers.1.mlp.linear_fc2.output:0") << screen;
    EXPECT_EQ(mark.step, 35) << screen;
    // Forward order: the layer's fc1 comes before its fc2, layer 0 before layer 1.
    EXPECT_LT(screen.find("layers.0.mlp.linear_fc1.output:0"), screen.find("layers.1.mlp.linear_fc1.output:0"))
        << screen;
    EXPECT_LT(screen.find("layers.1.mlp.linear_fc1.output:0"), screen.find("layers.1.mlp.linear_fc2.output:0"))
        << screen;
    // Down to that row, Enter: the chart of that tensor, rank 3 in front.
    const auto lines = lines_of(screen);
    int row = -1;
    for (int i = 3; i < static_cast<int>(lines.size()); ++i)
        if (lines[i].rfind(mark.row + " ", 0) == 0) row = i - 3;
    ASSERT_GE(row, 0) << screen;
    for (int i = 0; i < row; ++i) t.send_keys("j", true);
    t.send_keys("Enter");
    const std::string chart =
        t.wait_for("actv norm module.module.decoder.layers.1.mlp.linear_fc2.output", milliseconds(15000));
    ASSERT_FALSE(chart.empty()) << t.capture();
    EXPECT_NE(chart.find("rank 3"), std::string::npos) << chart;
}

// The real msprobe run with a NaN (../shared): rank 3, module.layers.0.fc2.output at step 11.
TEST(TuiLayers, a_real_msprobe_nan_is_marked_first_on_layer_0_fc2_of_rank_3_at_step_11) {
    if (!TmuxSession::available()) GTEST_SKIP() << "tmux is not installed";
    const std::string shared = shared_dir();
    if (shared.empty()) GTEST_SKIP() << "../shared is absent: the real msprobe fault runs are not available";
    TempDir tmp;
    ASSERT_EQ(
        run({program("msmon"), "ingest", shared + "/fixtures/msprobe-faults/nan", "--db", tmp / "store.db"}).exit_code,
        0);
    TmuxSession t(program("msmon-tui") + " --db " + (tmp / "store.db"), 100, 30, env_of(tmp));
    ASSERT_FALSE(t.wait_for("| 1 incident |", milliseconds(20000)).empty()) << t.capture();
    t.send_keys("7", true);
    const std::string screen = t.wait_for("rank 3  kind actv  op norm  40 tensors", milliseconds(15000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    const FirstMark mark = first_nan(screen);
    EXPECT_EQ(mark.row, "module.layers.0.fc2.output:0") << screen;
    EXPECT_EQ(mark.step, 11) << screen;
    EXPECT_LT(screen.find("module.layers.0.fc1.output:0"), screen.find("module.layers.0.fc2.output:0")) << screen;
}

}  // namespace
}  // namespace msmon::test
