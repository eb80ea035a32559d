// The Chart's series side by side, band and robust y in a real terminal: from the Layers tab's incident
// cell to the chart, `/` a filter, `t` one line a tensor it matches (named, counted, paged), `b` the band across
// every rank, `y` a y range one spike does not set.
#include <gtest/gtest.h>

#include <regex>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

TEST(TuiChartSeries, tensors_side_by_side_are_counted_named_and_paged_and_the_band_spans_every_rank) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TempDir tmp;
    ASSERT_EQ(run({program("msmon"), "simulate", tmp / "job", "--ranks", "4", "--steps", "50", "--xy", "--faults",
                   "nan@35:r3"})
                  .exit_code,
              0);
    ASSERT_EQ(run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "store.db"}).exit_code, 0);
    TmuxSession t(program("msmon-tui") + " --db " + (tmp / "store.db"), 140, 40, tmux_env(tmp));
    ASSERT_FALSE(t.wait_for("| 1 incident |", milliseconds(20000)).empty()) << t.capture();
    t.send_keys("7", true);
    ASSERT_FALSE(t.wait_for("(the top incident began here)", milliseconds(15000)).empty()) << t.capture();
    t.send_keys("Enter");
    ASSERT_FALSE(t.wait_for("step 35: rank 3=nan", milliseconds(15000)).empty()) << t.capture();

    // The tensors of the MLP's linear layers on rank 3, one line each, 6 a page.
    t.send_keys("/", true);
    t.send_keys("C-u");
    t.send_keys("linear_fc", true);
    t.send_keys("Enter");
    t.send_keys("t", true);
    std::string screen = t.wait_for("rank 3: tensors 1-6 of 12 (PgDn: more)", milliseconds(15000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    // The legend names each without the part they share, keeping the layer: layer 0's four, then layer 1's.
    const auto lines = lines_of(screen);
    std::string legend;
    for (const auto& l : lines)
        if (contains(l, "…0.") && contains(l, "…1.") && !contains(l, "step 35")) legend = l;
    ASSERT_FALSE(legend.empty()) << screen;
    EXPECT_LT(legend.find("…0."), legend.find("…1.")) << legend;
    EXPECT_TRUE(contains(legend, "fc1.input") && contains(legend, "fc2.output")) << legend;
    t.send_keys("PgDn");
    screen = t.wait_for("rank 3: tensors 7-12 of 12", milliseconds(15000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_FALSE(contains(screen, "PgDn: more")) << screen;

    // Back to one line a rank; `b`: rank 3 over the band of all 4.
    t.send_keys("t", true);
    t.send_keys("b", true);
    screen = t.wait_for("max of 4 ranks", milliseconds(15000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    const std::regex readout(R"(rank 3=\S+ max of 4 ranks=([0-9.]+) median=([0-9.]+) min=([0-9.]+))");
    std::smatch m;
    bool found = false;
    for (const auto& l : lines_of(screen))
        if (std::regex_search(l, m, readout)) {
            found = true;
            EXPECT_GE(std::stod(m[1]), std::stod(m[2])) << l;
            EXPECT_GE(std::stod(m[2]), std::stod(m[3])) << l;
        }
    EXPECT_TRUE(found) << screen;
}

// A gradient spike (every gradient x100 at step 30, 2 ranks): with `y` the axis spans the ordinary steps and the
// spike is marked on the top edge.
TEST(TuiChartSeries, robust_y_keeps_the_ordinary_steps_readable_and_marks_the_spike) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TempDir tmp;
    ASSERT_EQ(run({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--steps", "50", "--faults", "spike@30"})
                  .exit_code,
              0);
    ASSERT_EQ(run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "store.db"}).exit_code, 0);
    TmuxSession t(program("msmon-tui") + " --db " + (tmp / "store.db"), 120, 34, tmux_env(tmp));
    ASSERT_FALSE(t.wait_for(" 7 Layers", milliseconds(20000)).empty()) << t.capture();
    t.send_keys("2", true);
    const auto top_label = [](const std::string& screen) {
        // The largest y label: numbers before the axis's tick marks.
        double top = 0;
        const std::regex tick(R"(^\s*([0-9.e+]+)┤)");
        std::smatch m;
        for (const auto& l : lines_of(screen))
            if (std::regex_search(l, m, tick)) top = std::max(top, std::stod(m[1]));
        return top;
    };
    std::string plain = t.wait_for("grad_reduced norm", milliseconds(15000));
    ASSERT_FALSE(plain.empty()) << t.capture();
    const double plain_top = top_label(plain);
    t.send_keys("y", true);
    const std::string robust = t.wait_for("robust y", milliseconds(15000));
    ASSERT_FALSE(robust.empty()) << t.capture();
    EXPECT_LT(top_label(robust) * 10, plain_top) << plain << "\n" << robust;
    EXPECT_TRUE(contains(robust, "↑")) << robust;
    EXPECT_FALSE(contains(plain, "↑")) << plain;
}

}  // namespace
}  // namespace msmon::test
