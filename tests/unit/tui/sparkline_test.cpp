// Unit tests for tui/widgets/sparkline: levels from column maxima, marks for NaN/Inf, alignment and clipping.
#include "tui/widgets/sparkline.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace msmon::tui {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

ColumnStat col(double min, double max) {
    ColumnStat c;
    c.count = 1;
    c.min = min;
    c.max = max;
    c.last = max;
    return c;
}

ColumnStat value(double v) {
    return col(v, v);
}

std::u32string row(const ScreenBuffer& buf, int y, int x0, int width) {
    std::u32string out;
    for (int x = x0; x < x0 + width; ++x) out += buf.at(x, y).ch;
    return out;
}

TEST(Sparkline, eight_levels_from_lowest_to_highest) {
    std::vector<ColumnStat> cols;
    for (int i = 0; i < 8; ++i) cols.push_back(value(i));
    ScreenBuffer buf(8, 1);
    draw_sparkline(buf, 0, 0, 8, cols, Glyphs{}, {});
    EXPECT_EQ(row(buf, 0, 0, 8), U"▁▂▃▄▅▆▇█");
}

TEST(Sparkline, one_step_spike_in_ten_thousand_points_stays_at_the_top_level) {
    std::vector<SeriesPoint> points;
    for (int s = 0; s < 10000; ++s) points.push_back({s, 1.0 + 0.001 * (s % 7)});
    points[4321].value = 50.0;
    const auto cols = downsample_minmax(points, 0, 9999, 50);
    ScreenBuffer buf(50, 1);
    draw_sparkline(buf, 0, 0, 50, cols, Glyphs{}, {});
    const int spike = 4321 * 50 / 10000;
    for (int x = 0; x < 50; ++x) EXPECT_EQ(buf.at(x, 0).ch, x == spike ? U'█' : U'▁') << x;
}

TEST(Sparkline, level_comes_from_the_column_max_not_its_min) {
    const std::vector<ColumnStat> cols = {value(0), col(0, 10), value(10)};
    ScreenBuffer buf(3, 1);
    draw_sparkline(buf, 0, 0, 3, cols, Glyphs{}, {});
    EXPECT_EQ(row(buf, 0, 0, 3), U"▁██");
}

// A backlog read newest first: steps 0-2 and 9 are in, 3-8 not read yet. Empty columns there show as unread
// (dim), a column with a value there shows its value, and an empty column outside the span stays blank.
TEST(Sparkline, empty_columns_in_the_unread_span_are_drawn_unread_not_blank) {
    std::vector<SeriesPoint> points = {{0, 1.0}, {1, 2.0}, {2, 3.0}, {5, 4.0}, {9, 8.0}, {11, 8.0}};
    const auto cols = downsample_minmax(points, 0, 11, 12);
    SparklineOptions so;
    so.unread = std::pair<std::int64_t, std::int64_t>{3, 8};
    ScreenBuffer buf(12, 1);
    draw_sparkline(buf, 0, 0, 12, cols, Glyphs{}, so);
    EXPECT_EQ(row(buf, 0, 0, 12), U"▁▂▃░░▄░░░█ █");
    EXPECT_EQ(buf.at(3, 0).style.fg, Color::dim);
    ScreenBuffer ascii(12, 1);
    Glyphs plain;
    plain.unicode = false;
    draw_sparkline(ascii, 0, 0, 12, cols, plain, so);
    EXPECT_EQ(row(ascii, 0, 0, 12),
              U"_.:?"
              U"?-?"
              U"??# #");  // split: no trigraphs
    ScreenBuffer read_all(12, 1);
    draw_sparkline(read_all, 0, 0, 12, cols, Glyphs{}, {});
    EXPECT_EQ(row(read_all, 0, 0, 12), U"▁▂▃  ▄   █ █");
}

TEST(Sparkline, nan_and_infinities_are_marks_in_the_nan_style) {
    std::vector<ColumnStat> cols(4, value(1.0));
    cols[0].max = 2.0;
    cols[1].has_nan = true;
    cols[2].has_pos_inf = true;
    cols[3].has_neg_inf = true;
    SparklineOptions options;
    ScreenBuffer buf(4, 1);
    draw_sparkline(buf, 0, 0, 4, cols, Glyphs{}, options);
    EXPECT_EQ(row(buf, 0, 0, 4), U"█!^v");
    for (int x = 1; x < 4; ++x) EXPECT_EQ(buf.at(x, 0).style, options.nan_style);
}

TEST(Sparkline, nan_mark_wins_over_finite_values_in_the_same_column) {
    std::vector<ColumnStat> cols = {value(0), value(5)};
    cols[1].has_nan = true;
    cols[1].has_pos_inf = true;
    ScreenBuffer buf(2, 1);
    draw_sparkline(buf, 0, 0, 2, cols, Glyphs{false}, {});
    EXPECT_EQ(buf.at(1, 0).ch, U'!');
}

TEST(Sparkline, empty_columns_are_blank) {
    const std::vector<ColumnStat> cols = {value(1), ColumnStat{}, value(2)};
    ScreenBuffer buf(3, 1);
    buf.fill(0, 0, 3, 1, U'#');
    draw_sparkline(buf, 0, 0, 3, cols, Glyphs{}, {});
    EXPECT_EQ(row(buf, 0, 0, 3), U"▁ █");
}

TEST(Sparkline, columns_are_right_aligned_so_the_newest_is_at_the_right_edge) {
    const std::vector<ColumnStat> cols = {value(0), value(1)};
    ScreenBuffer buf(6, 1);
    draw_sparkline(buf, 0, 0, 6, cols, Glyphs{}, {});
    EXPECT_EQ(row(buf, 0, 0, 6), U"    ▁█");
}

TEST(Sparkline, more_columns_than_width_keeps_the_newest) {
    std::vector<ColumnStat> cols;
    for (int i = 0; i < 10; ++i) cols.push_back(value(i < 7 ? 0 : 1));
    cols[0] = value(100);  // oldest, cut off: must not set the range
    ScreenBuffer buf(4, 1);
    draw_sparkline(buf, 0, 0, 4, cols, Glyphs{}, {});
    EXPECT_EQ(row(buf, 0, 0, 4), U"▁███");
}

TEST(Sparkline, marked_columns_use_the_mark_style) {
    std::vector<ColumnStat> cols = {value(0), value(1), value(2)};
    cols[1].marked = true;
    SparklineOptions options;
    options.style = {Color::series1};
    ScreenBuffer buf(3, 1);
    draw_sparkline(buf, 0, 0, 3, cols, Glyphs{}, options);
    EXPECT_EQ(buf.at(0, 0).style, options.style);
    EXPECT_EQ(buf.at(1, 0).style, options.mark_style);
    EXPECT_EQ(buf.at(2, 0).style, options.style);
}

TEST(Sparkline, ascii_mode_uses_the_ramp_and_only_ascii_bytes) {
    std::vector<ColumnStat> cols;
    for (int i = 0; i < 8; ++i) cols.push_back(value(i));
    cols.push_back(ColumnStat{});
    cols.back().has_nan = true;
    ScreenBuffer buf(9, 1);
    draw_sparkline(buf, 0, 0, 9, cols, Glyphs{false}, {});
    const std::string text = buf.to_text();
    EXPECT_EQ(text, "_.:-=+*#!");
    for (unsigned char b : text) EXPECT_LT(b, 0x80);
}

TEST(Sparkline, log_scale_spreads_decades_and_puts_non_positive_lowest) {
    const std::vector<ColumnStat> cols = {value(1), value(10), value(100), value(1000), value(-5), value(0)};
    SparklineOptions options;
    options.log_scale = true;
    ScreenBuffer buf(6, 1);
    draw_sparkline(buf, 0, 0, 6, cols, Glyphs{}, options);
    // log10: 0, 1, 2, 3 over [0, 3] → levels 0, 2, 5, 7.
    EXPECT_EQ(row(buf, 0, 0, 6), U"▁▃▆█▁▁");
}

TEST(Sparkline, explicit_range_clamps_values_outside_it) {
    const std::vector<ColumnStat> cols = {value(-10), value(5), value(50)};
    SparklineOptions options;
    options.lo = 0;
    options.hi = 10;
    ScreenBuffer buf(3, 1);
    draw_sparkline(buf, 0, 0, 3, cols, Glyphs{}, options);
    EXPECT_EQ(row(buf, 0, 0, 3), U"▁▅█");
}

TEST(Sparkline, flat_series_sits_mid_height) {
    const std::vector<ColumnStat> cols(3, value(4.2));
    ScreenBuffer buf(3, 1);
    draw_sparkline(buf, 0, 0, 3, cols, Glyphs{}, {});
    EXPECT_EQ(row(buf, 0, 0, 3), U"▄▄▄");
}

TEST(Sparkline, draws_only_inside_its_row_and_width) {
    std::vector<ColumnStat> cols(20, value(1));
    cols[19] = value(2);
    ScreenBuffer buf(12, 3);
    buf.fill(0, 0, 12, 3, U'#');
    draw_sparkline(buf, 3, 1, 5, cols, Glyphs{}, {});
    for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 12; ++x)
            if (y != 1 || x < 3 || x >= 8) {
                EXPECT_EQ(buf.at(x, y).ch, U'#') << x << "," << y;
            }
    EXPECT_EQ(buf.at(7, 1).ch, U'█');
    // Partly off the buffer: clipped, no crash.
    draw_sparkline(buf, 9, 2, 10, cols, Glyphs{}, {});
    draw_sparkline(buf, -4, 0, 6, cols, Glyphs{}, {});
    EXPECT_EQ(buf.at(11, 2).ch, U'▁');
    EXPECT_EQ(buf.at(1, 0).ch, U'█');
}

}  // namespace
}  // namespace msmon::tui
