// The Chart's band across ranks and its robust y range: min, median and max per pixel column over every
// rank; one spike does not flatten the rest when the y range leaves out the extreme 2%, and the points it leaves
// out are marked on the edge they leave by.
#include <gtest/gtest.h>

#include <cmath>

#include "tui/models/rank_band.hpp"
#include "tui/widgets/braille_chart.hpp"

namespace msmon::tui {
namespace {

TEST(RankBand, min_median_and_max_per_column_over_every_rank_without_non_finite_values) {
    std::vector<RankSeries> series;
    for (int r = 0; r < 5; ++r) {
        RankSeries s;
        s.rank = r;
        for (int step = 0; step < 10; ++step) s.points.push_back({step, static_cast<double>(r * 10 + step)});
        series.push_back(std::move(s));
    }
    series[4].points[3].value = NAN;  // left out at step 3: ranks 0-3 remain
    const auto band = rank_band(series, StepColumns(0, 9, 10));
    EXPECT_EQ(band.ranks, 5);
    ASSERT_EQ(band.min.size(), 10u);
    EXPECT_DOUBLE_EQ(band.min[2].value, 2);
    EXPECT_DOUBLE_EQ(band.max[2].value, 42);
    EXPECT_DOUBLE_EQ(band.median[2].value, 22);
    EXPECT_DOUBLE_EQ(band.max[3].value, 33);  // rank 4's NaN is not the max
    // Two steps a column: both steps' values of every rank.
    const auto wide = rank_band(series, StepColumns(0, 9, 5));
    ASSERT_EQ(wide.min.size(), 5u);
    EXPECT_DOUBLE_EQ(wide.min[0].value, 0);
    EXPECT_DOUBLE_EQ(wide.max[0].value, 41);
    EXPECT_EQ(wide.min[1].step, 2);
}

// The y axis's top label: the largest number among the labels left of the axis line.
double top_label(const ScreenBuffer& buf) {
    double top = -INFINITY;
    for (int y = 0; y < buf.height(); ++y) {
        std::string label;
        for (int x = 0; x < 8; ++x) {
            const char32_t c = buf.at(x, y).ch;
            if ((c >= '0' && c <= '9') || c == '.' || c == '-' || c == 'e') label += static_cast<char>(c);
        }
        if (!label.empty()) top = std::max(top, std::atof(label.c_str()));
    }
    return top;
}

TEST(ChartRobustY, a_spike_leaves_the_range_and_is_marked_on_the_top_edge) {
    std::vector<SeriesPoint> points;
    for (int step = 0; step < 100; ++step) points.push_back({step, 1.0 + 0.01 * (step % 7)});
    points[60].value = 500;
    ChartSeries s{"rank 0", points, {}, false};
    ChartOptions o;
    o.step_lo = 0, o.step_hi = 99;
    for (bool robust : {false, true}) {
        o.clip_fraction = robust ? 0.02 : 0;
        ScreenBuffer buf(60, 20);
        draw_chart(buf, 0, 0, 60, 20, {s}, o, Glyphs{});
        const std::string text = buf.to_text();
        if (robust) {
            EXPECT_LT(top_label(buf), 2) << text;  // the axis spans the ordinary values
            EXPECT_NE(text.find("↑"), std::string::npos) << text;
        } else {
            EXPECT_GE(top_label(buf), 400) << text;  // everything in range: the spike sets the top
            EXPECT_EQ(text.find("↑"), std::string::npos) << text;
        }
    }
    // Fewer than 50 values: 2% of them is not one value, nothing leaves the range (the top is the spike's).
    std::vector<SeriesPoint> few(points.begin() + 40, points.begin() + 70);
    o.clip_fraction = 0.02;
    ScreenBuffer small(60, 20);
    draw_chart(small, 0, 0, 60, 20, {{"rank 0", few, {}, false}}, o, Glyphs{});
    EXPECT_GE(top_label(small), 400) << small.to_text();
    EXPECT_EQ(small.to_text().find("↑"), std::string::npos) << small.to_text();
    // ASCII: the mark is an apostrophe on the top edge.
    o.clip_fraction = 0.02;
    ScreenBuffer ascii(60, 20);
    draw_chart(ascii, 0, 0, 60, 20, {s}, o, Glyphs{false, false});
    EXPECT_NE(ascii.to_text().find('\''), std::string::npos) << ascii.to_text();
}

}  // namespace
}  // namespace msmon::tui
