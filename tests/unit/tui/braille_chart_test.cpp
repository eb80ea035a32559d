// Unit tests for tui/widgets/braille_chart: lines, spans, marks, restarts, axes, legend, cursor, clipping,
// EMA.
#include "tui/widgets/braille_chart.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace msmon::tui {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
const Glyphs kUnicode{true, true};
const Glyphs kAscii{false, true};

std::vector<SeriesPoint> line_points(std::int64_t from, std::int64_t to, double (*f)(std::int64_t)) {
    std::vector<SeriesPoint> out;
    for (std::int64_t s = from; s <= to; ++s) out.push_back({s, f(s)});
    return out;
}

ChartOptions range(std::int64_t lo, std::int64_t hi) {
    ChartOptions o;
    o.step_lo = lo;
    o.step_hi = hi;
    return o;
}

std::string row_text(const ScreenBuffer& buf, int y) {
    const std::string all = buf.to_text();
    std::size_t start = 0;
    for (int i = 0; i < y; ++i) start = all.find('\n', start) + 1;
    const std::size_t end = all.find('\n', start);
    return all.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

bool is_braille_with_dots(char32_t ch) {
    return ch > U'\u2800' && ch <= U'\u28FF';
}

int count_in_rows(const ScreenBuffer& buf, int x0, int x1, int y0, int y1, char32_t ch) {
    int n = 0;
    for (int y = y0; y <= y1; ++y)
        for (int x = x0; x <= x1; ++x) n += buf.at(x, y).ch == ch;
    return n;
}

TEST(BrailleChart, never_draws_outside_its_rectangle_at_any_size) {
    std::vector<SeriesPoint> points = line_points(0, 300, [](std::int64_t s) { return std::sin(s / 9.0); });
    points[40].value = kNaN;
    points[80].value = kInf;
    points[120].value = -kInf;
    points.push_back({10, 5.0});  // a restart
    const std::vector<ChartSeries> series = {{"raw", points, {Color::series0}, true},
                                             {"a long legend label", points, {Color::series1}, false}};
    ChartOptions options = range(0, 300);
    options.title = "grad_norm of rank 0 (wide 標題)";
    options.cursor_step = 100;
    for (const Glyphs& glyphs : {kUnicode, kAscii})
        for (int w = 0; w <= 24; ++w)
            for (int h = 0; h <= 10; ++h) {
                ScreenBuffer buf(32, 14);
                buf.fill(0, 0, 32, 14, U'@');
                draw_chart(buf, 4, 2, w, h, series, options, glyphs);
                for (int y = 0; y < 14; ++y)
                    for (int x = 0; x < 32; ++x) {
                        const bool inside = x >= 4 && x < 4 + w && y >= 2 && y < 2 + h;
                        if (!inside) {
                            ASSERT_EQ(buf.at(x, y).ch, U'@') << w << "x" << h << " at " << x << "," << y;
                        }
                    }
            }
}

TEST(BrailleChart, unicode_mode_draws_braille_dots) {
    const std::vector<ChartSeries> series = {
        {"s", line_points(0, 99, [](std::int64_t s) { return s * 0.1; }), {Color::series0}}};
    ScreenBuffer buf(40, 12);
    draw_chart(buf, 0, 0, 40, 12, series, range(0, 99), kUnicode);
    int dotted = 0;
    for (int y = 0; y < 12; ++y)
        for (int x = 0; x < 40; ++x) dotted += is_braille_with_dots(buf.at(x, y).ch);
    EXPECT_GT(dotted, 20);
}

TEST(BrailleChart, ascii_mode_output_is_pure_ascii) {
    std::vector<SeriesPoint> points = line_points(0, 99, [](std::int64_t s) { return std::cos(s / 7.0); });
    points[33].value = kNaN;
    ChartOptions options = range(0, 99);
    options.title = "loss";
    options.cursor_step = 50;
    ScreenBuffer buf(50, 14);
    draw_chart(buf, 0, 0, 50, 14, {{"loss", points, {Color::series0}}, {"raw", points, {}, true}}, options, kAscii);
    const std::string text = buf.to_text();
    for (unsigned char b : text) ASSERT_LT(b, 0x80) << text;
    EXPECT_NE(text.find('*'), std::string::npos);
}

TEST(BrailleChart, one_step_spike_in_ten_thousand_points_reaches_the_top_row) {
    std::vector<SeriesPoint> points = line_points(0, 9999, [](std::int64_t s) { return 1.0 + 0.01 * (s % 5); });
    points[6789].value = 1000.0;
    ScreenBuffer buf(60, 15);
    draw_chart(buf, 0, 0, 60, 15, {{"", points, {Color::series0}}}, range(0, 9999), kUnicode);
    // No title and no legend: the plot starts at row 0.
    int top_cells = 0;
    for (int x = 0; x < 60; ++x) top_cells += is_braille_with_dots(buf.at(x, 0).ch);
    EXPECT_EQ(top_cells, 1) << buf.to_text();
    EXPECT_NE(row_text(buf, 0).find("1000"), std::string::npos);
}

TEST(BrailleChart, nan_and_infinities_are_marked_on_the_plot_edges) {
    std::vector<SeriesPoint> points = line_points(0, 99, [](std::int64_t) { return 1.0; });
    points[20].value = kNaN;
    points[50].value = kInf;
    points[80].value = -kInf;
    for (const Glyphs& glyphs : {kUnicode, kAscii}) {
        ScreenBuffer buf(60, 12);
        draw_chart(buf, 0, 0, 60, 12, {{"", points, {Color::series0}}}, range(0, 99), glyphs);
        const int plot_bottom = 12 - 3;  // x labels and axis line below the plot
        EXPECT_EQ(count_in_rows(buf, 0, 59, 0, 0, U'!'), 1) << buf.to_text();
        EXPECT_EQ(count_in_rows(buf, 0, 59, 0, 0, U'^'), 1) << buf.to_text();
        EXPECT_EQ(count_in_rows(buf, 0, 59, plot_bottom, plot_bottom, U'v'), 1) << buf.to_text();
        for (int x = 0; x < 60; ++x) {
            for (int y : {0, plot_bottom}) {
                const char32_t ch = buf.at(x, y).ch;
                if (ch == U'!' || ch == U'^' || ch == U'v') {
                    EXPECT_EQ(buf.at(x, y).style.fg, Color::bad);
                }
            }
        }
    }
}

TEST(BrailleChart, nan_in_a_faint_series_is_still_marked) {
    std::vector<SeriesPoint> raw = line_points(0, 9, [](std::int64_t s) { return 1.0 * s; });
    raw[4].value = kNaN;
    ScreenBuffer buf(30, 8);
    draw_chart(buf, 0, 0, 30, 8, {{"", raw, {}, true}}, range(0, 9), kAscii);
    EXPECT_EQ(count_in_rows(buf, 0, 29, 0, 0, U'!'), 1) << buf.to_text();
}

// Height 12 with no title and no legend: rows 0..9 are the plot, row 10 the x axis line, row 11 its labels.
constexpr int kPlotRows = 10;

// First plot column: right of the ASCII axis corner '+' on the x axis line.
int plot_left(const ScreenBuffer& buf) {
    return static_cast<int>(row_text(buf, kPlotRows).find('+')) + 1;
}

int marks_between_top_and_bottom(const ScreenBuffer& buf) {
    int n = 0;
    for (int y = 1; y < kPlotRows - 1; ++y)
        for (int x = plot_left(buf); x < buf.width(); ++x) n += buf.at(x, y).ch == U'*' || buf.at(x, y).ch == U'|';
    return n;
}

TEST(BrailleChart, restart_going_back_in_steps_does_not_draw_a_connecting_line) {
    std::vector<SeriesPoint> points = line_points(0, 49, [](std::int64_t) { return 0.0; });
    for (std::int64_t s = 0; s <= 49; ++s) points.push_back({s, 10.0});  // restarted run, another level
    ScreenBuffer buf(40, 12);
    draw_chart(buf, 0, 0, 40, 12, {{"", points, {}}}, range(0, 49), kAscii);
    EXPECT_GT(count_in_rows(buf, plot_left(buf), 39, 0, 0, U'*'), 30) << buf.to_text();
    EXPECT_GT(count_in_rows(buf, plot_left(buf), 39, kPlotRows - 1, kPlotRows - 1, U'*'), 30) << buf.to_text();
    EXPECT_EQ(marks_between_top_and_bottom(buf), 0) << buf.to_text();
}

TEST(BrailleChart, jump_without_restart_is_joined_by_a_line) {
    // The control for the restart test: the same two levels in one run are connected.
    std::vector<SeriesPoint> points = line_points(0, 24, [](std::int64_t) { return 0.0; });
    for (std::int64_t s = 25; s <= 49; ++s) points.push_back({s, 10.0});
    ScreenBuffer buf(40, 12);
    draw_chart(buf, 0, 0, 40, 12, {{"", points, {}}}, range(0, 49), kAscii);
    EXPECT_GE(marks_between_top_and_bottom(buf), kPlotRows - 2) << buf.to_text();
}

// A backlog read newest first: steps 0-24 and 90-99 are in, 25-89 not yet. The unread span is shaded (░, ASCII '?'),
// not bridged by a line as if the values between were known, and the read columns keep their lines.
TEST(BrailleChart, steps_not_read_yet_are_shaded_and_no_line_crosses_them) {
    std::vector<SeriesPoint> points = line_points(0, 24, [](std::int64_t) { return 0.0; });
    for (std::int64_t s = 90; s <= 99; ++s) points.push_back({s, 10.0});
    ChartOptions options = range(0, 99);
    options.unread = std::pair<std::int64_t, std::int64_t>{25, 89};
    int left = 0;  // found on the ASCII axis line (its corner is '+'), the same in both modes
    for (const Glyphs& glyphs : {kAscii, kUnicode}) {
        const char32_t shade = glyphs.unicode ? U'\u2591' : U'?';
        ScreenBuffer buf(60, 12);
        draw_chart(buf, 0, 0, 60, 12, {{"", points, {}}}, options, glyphs);
        if (!glyphs.unicode) left = plot_left(buf);
        const int plot_w = 60 - left;
        // Columns well inside 25-89 are shaded from the top row to the bottom one, and hold nothing else.
        const int from = left + plot_w * 30 / 100, to = left + plot_w * 85 / 100;
        EXPECT_EQ(count_in_rows(buf, from, to, 0, kPlotRows - 1, shade), (to - from + 1) * kPlotRows) << buf.to_text();
        // The read steps are drawn, and not shaded.
        EXPECT_EQ(count_in_rows(buf, left, left + plot_w * 20 / 100, 0, kPlotRows - 1, shade), 0) << buf.to_text();
        EXPECT_EQ(count_in_rows(buf, left + plot_w * 92 / 100, 59, 0, kPlotRows - 1, shade), 0) << buf.to_text();
        if (!glyphs.unicode) {
            EXPECT_EQ(marks_between_top_and_bottom(buf), 0) << buf.to_text();
        }
    }
    // The control: with every step read, the same points are joined by a line and nothing is shaded.
    ScreenBuffer buf(60, 12);
    draw_chart(buf, 0, 0, 60, 12, {{"", points, {}}}, range(0, 99), kAscii);
    EXPECT_GE(marks_between_top_and_bottom(buf), 1) << buf.to_text();
    EXPECT_EQ(count_in_rows(buf, 0, 59, 0, kPlotRows - 1, U'?'), 0) << buf.to_text();
}

TEST(BrailleChart, line_crosses_the_window_when_no_point_falls_inside_it) {
    const std::vector<SeriesPoint> points = {{0, 0.0}, {100, 10.0}};
    ChartOptions options = range(40, 60);
    options.y_lo = 0;
    options.y_hi = 10;
    ScreenBuffer buf(30, 12);
    draw_chart(buf, 0, 0, 30, 12, {{"", points, {}}}, options, kAscii);
    int first_col = 0, last_col = 0;
    for (int y = 0; y < kPlotRows; ++y) {
        first_col += buf.at(plot_left(buf), y).ch == U'*';
        last_col += buf.at(29, y).ch == U'*';
    }
    EXPECT_GE(first_col, 1) << buf.to_text();
    EXPECT_GE(last_col, 1) << buf.to_text();
}

TEST(BrailleChart, line_runs_to_the_edge_toward_points_outside_the_window) {
    const std::vector<SeriesPoint> points = {{0, 10.0}, {50, 5.0}, {100, 0.0}};
    ChartOptions options = range(40, 60);
    options.y_lo = 0;
    options.y_hi = 10;
    ScreenBuffer buf(30, 12);
    draw_chart(buf, 0, 0, 30, 12, {{"", points, {}}}, options, kAscii);
    int first_col = 0, last_col = 0;
    for (int y = 0; y < kPlotRows; ++y) {
        first_col += buf.at(plot_left(buf), y).ch == U'*';
        last_col += buf.at(29, y).ch == U'*';
    }
    EXPECT_GE(first_col, 1) << buf.to_text();
    EXPECT_GE(last_col, 1) << buf.to_text();
}

TEST(BrailleChart, cursor_draws_a_vertical_line_and_reads_out_each_series) {
    const std::vector<ChartSeries> series = {
        {"loss", line_points(0, 100, [](std::int64_t s) { return s * 0.5; }), {Color::series0}},
        {"grad", line_points(0, 100, [](std::int64_t) { return 2.0; }), {Color::series1}}};
    ChartOptions options = range(0, 100);
    options.title = "rank 3";
    options.cursor_step = 50;
    ScreenBuffer buf(70, 14);
    draw_chart(buf, 0, 0, 70, 14, series, options, kAscii);
    EXPECT_EQ(row_text(buf, 0), "rank 3  step 50: loss=25 grad=2");
    EXPECT_EQ(buf.at(0, 0).style.attr & kBold, kBold);
    // Some column of the plot (rows 1..9) is mostly cursor.
    int best = 0;
    for (int x = 4; x < 70; ++x) best = std::max(best, count_in_rows(buf, x, x, 1, 9, U'|'));
    EXPECT_GE(best, 6) << buf.to_text();
}

TEST(BrailleChart, cursor_read_out_uses_the_latest_value_at_or_before_the_step) {
    const std::vector<SeriesPoint> sparse = {{0, 1.0}, {10, 2.5}, {20, 4.0}};
    ChartOptions options = range(0, 20);
    options.cursor_step = 15;
    ScreenBuffer buf(40, 10);
    draw_chart(buf, 0, 0, 40, 10, {{"x", sparse, {}}}, options, kUnicode);
    EXPECT_EQ(row_text(buf, 0), "step 15: x=2.5");
}

// A drill-down's title names a whole tensor; the read-out then had no room after it and was clipped to "step".
TEST(BrailleChart, cursor_read_out_takes_a_row_of_its_own_when_the_title_leaves_no_room) {
    const std::vector<ChartSeries> series = {
        {"rank 2", line_points(0, 40, [](std::int64_t s) { return s * 0.5; }), {Color::series0}},
        {"r0", line_points(0, 40, [](std::int64_t) { return 2.0; }), {Color::series1}, true}};
    ChartOptions options = range(0, 40);
    options.title = "grad_reduced norm /^module\\.decoder\\.layers\\.1\\.self_attention\\.linear_proj\\.weight$/";
    options.cursor_step = 30;
    ScreenBuffer buf(100, 16);
    draw_chart(buf, 0, 0, 100, 16, series, options, kAscii);
    EXPECT_EQ(row_text(buf, 0).rfind("grad_reduced norm /^module", 0), 0u) << buf.to_text();  // shown escaped: \\.
    EXPECT_EQ(row_text(buf, 1), "step 30: rank 2=15 r0=2") << buf.to_text();
    EXPECT_EQ(buf.at(19, 1).style.attr & kDim, kDim) << "the faint series' label keeps its style";
    // With room for both, one row as before; with too few rows for the plot, the read-out row goes first.
    options.title = "loss";
    draw_chart(buf, 0, 0, 100, 16, series, options, kAscii);
    EXPECT_EQ(row_text(buf, 0), "loss  step 30: rank 2=15 r0=2") << buf.to_text();
    options.title = std::string(89, 't');
    ScreenBuffer small(90, 4);
    draw_chart(small, 0, 0, 90, 4, series, options, kAscii);
    EXPECT_EQ(row_text(small, 0).rfind(options.title, 0), 0u) << small.to_text();
    EXPECT_EQ(row_text(small, 1).find("step 30"), std::string::npos) << small.to_text();
}

TEST(BrailleChart, legend_shows_labels_in_their_series_colours_clipped_to_width) {
    const auto points = line_points(0, 9, [](std::int64_t s) { return 1.0 * s; });
    const std::vector<ChartSeries> series = {{"alpha", points, {Color::series0}},
                                             {"beta", points, {Color::series1}},
                                             {"gamma_long_label", points, {Color::series2}}};
    ScreenBuffer buf(20, 10);
    draw_chart(buf, 0, 0, 20, 10, series, range(0, 9), kUnicode);
    EXPECT_EQ(row_text(buf, 9), "alpha  beta  gamma_\u2026");
    EXPECT_EQ(buf.at(0, 9).style.fg, Color::series0);
    EXPECT_EQ(buf.at(7, 9).style.fg, Color::series1);
    EXPECT_EQ(buf.at(19, 9).style.fg, Color::series2);
}

TEST(BrailleChart, axes_show_short_readable_numbers_and_step_ticks) {
    ScreenBuffer buf(60, 12);
    draw_chart(buf, 0, 0, 60, 12, {{"", line_points(0, 1000, [](std::int64_t s) { return s * 2.0; }), {}}},
               range(0, 1000), kUnicode);
    const std::string text = buf.to_text();
    EXPECT_NE(text.find("1500"), std::string::npos) << text;
    EXPECT_EQ(text.find("e+"), std::string::npos) << text;
    const std::string x_labels = row_text(buf, 11);
    EXPECT_EQ(x_labels.find_first_not_of(' '), x_labels.find('0'));
    EXPECT_NE(x_labels.find("1000"), std::string::npos) << text;

    ScreenBuffer tiny(60, 12);
    draw_chart(tiny, 0, 0, 60, 12,
               {{"", line_points(0, 100, [](std::int64_t s) { return 1e-5 + 1e-7 * static_cast<double>(s); }), {}}},
               range(0, 100), kUnicode);
    EXPECT_NE(tiny.to_text().find("1.5e-05"), std::string::npos) << tiny.to_text();

    ScreenBuffer unit(60, 12);
    draw_chart(unit, 0, 0, 60, 12, {{"", line_points(0, 100, [](std::int64_t s) { return s / 100.0; }), {}}},
               range(0, 100), kUnicode);
    EXPECT_NE(unit.to_text().find("0.25"), std::string::npos) << unit.to_text();
}

TEST(BrailleChart, log_scale_places_decades_evenly_and_skips_non_positive_values) {
    const std::vector<SeriesPoint> points = {{0, 1.0}, {25, 0.0}, {50, 10.0}, {75, -5.0}, {100, 100.0}};
    ChartOptions options = range(0, 100);
    options.log_y = true;
    // Height 11: plot rows 0..8; labels "1", "10", "100" take columns 0..3; plot columns 4..104 = steps
    // 0..100.
    ScreenBuffer buf(105, 11);
    draw_chart(buf, 0, 0, 105, 11, {{"", points, {}}}, options, kAscii);
    EXPECT_EQ(buf.at(4, 8).ch, U'*') << buf.to_text();
    EXPECT_EQ(buf.at(54, 4).ch, U'*') << buf.to_text();
    EXPECT_EQ(buf.at(104, 0).ch, U'*') << buf.to_text();
    EXPECT_EQ(row_text(buf, 4).substr(0, 4), " 10+");
    // Nothing is plotted for 0 (step 25) or -5 (step 75): not even clamped onto the bottom row.
    EXPECT_EQ(buf.at(29, 8).ch, U' ') << buf.to_text();
    EXPECT_EQ(buf.at(79, 8).ch, U' ') << buf.to_text();
}

TEST(BrailleChart, flat_series_is_padded_and_drawn_mid_height) {
    ScreenBuffer buf(30, 7);  // plot rows 0..4
    draw_chart(buf, 0, 0, 30, 7, {{"", line_points(0, 20, [](std::int64_t) { return 5.0; }), {}}}, range(0, 20),
               kAscii);
    EXPECT_GT(count_in_rows(buf, 0, 29, 2, 2, U'*'), 20) << buf.to_text();
    EXPECT_NE(row_text(buf, 2).find('5'), std::string::npos) << buf.to_text();
}

TEST(BrailleChart, faint_series_is_dim_and_drawn_beneath_the_others) {
    auto points = line_points(0, 99, [](std::int64_t s) { return std::sin(s / 10.0); });
    auto raw = points;
    raw[60].value = 5.0;  // only the faint series reaches the top
    const Style main_style{Color::series0};
    const Style raw_style{Color::series1};
    // Listed after the main series, but still drawn first.
    const std::vector<ChartSeries> series = {{"", points, main_style}, {"", raw, raw_style, true}};
    ScreenBuffer buf(60, 14);
    draw_chart(buf, 0, 0, 60, 14, series, range(0, 99), kUnicode);
    int dim_cells = 0, main_cells = 0;
    for (int y = 0; y < 11; ++y)
        for (int x = 0; x < 60; ++x) {
            const Cell& c = buf.at(x, y);
            if (!is_braille_with_dots(c.ch)) continue;
            if (c.style.fg == Color::series1) {
                EXPECT_EQ(c.style.attr & kDim, kDim);
                ++dim_cells;
            } else {
                EXPECT_EQ(c.style, main_style);
                ++main_cells;
            }
        }
    EXPECT_GE(dim_cells, 1);
    EXPECT_GT(main_cells, 20);
    // The top row holds only the faint spike.
    for (int x = 0; x < 60; ++x)
        if (is_braille_with_dots(buf.at(x, 0).ch)) {
            EXPECT_EQ(buf.at(x, 0).style.fg, Color::series1);
        }
}

TEST(BrailleChart, extreme_values_and_steps_draw_without_hanging) {
    const std::int64_t big = std::numeric_limits<std::int64_t>::max() - 1;
    const std::vector<SeriesPoint> points = {{-big, -1e308}, {0, 1e308}, {big, -1e308}, {5, 1e-308}};
    ScreenBuffer buf(40, 12);
    draw_chart(buf, 0, 0, 40, 12, {{"x", points, {}}}, range(-big, big), kUnicode);
    ChartOptions options = range(-big, big);
    options.log_y = true;
    options.cursor_step = 0;
    draw_chart(buf, 0, 0, 40, 12, {{"x", points, {}}}, options, kAscii);
    EXPECT_NE(buf.to_text().find("step 0: x=1e+308"), std::string::npos) << buf.to_text();
}

TEST(BrailleChart, debiased_ema_matches_tensorboard_by_hand) {
    // weight 0.5: last = 0.5, 1.25, 2.125; debias 0.5, 0.75, 0.875.
    const auto smoothed = smooth_debiased_ema({{0, 1.0}, {1, 2.0}, {2, 3.0}}, 0.5);
    ASSERT_EQ(smoothed.size(), 3u);
    EXPECT_DOUBLE_EQ(smoothed[0].value, 1.0);
    EXPECT_DOUBLE_EQ(smoothed[1].value, 1.25 / 0.75);
    EXPECT_DOUBLE_EQ(smoothed[2].value, 2.125 / 0.875);
    EXPECT_EQ(smoothed[2].step, 2);
}

TEST(BrailleChart, ema_passes_nan_and_inf_through_without_folding_them_in) {
    const auto smoothed = smooth_debiased_ema({{0, 1.0}, {1, kNaN}, {2, kInf}, {3, 3.0}}, 0.5);
    EXPECT_DOUBLE_EQ(smoothed[0].value, 1.0);
    EXPECT_TRUE(std::isnan(smoothed[1].value));
    EXPECT_EQ(smoothed[2].value, kInf);
    // The third finite-count step sees only 1 and 3: last = 0.25 + 1.5 = 1.75, debias 1 - 0.25.
    EXPECT_DOUBLE_EQ(smoothed[3].value, 1.75 / 0.75);
}

TEST(BrailleChart, ema_with_zero_weight_is_the_raw_series) {
    const std::vector<SeriesPoint> raw = {{0, 4.0}, {1, -2.0}, {2, 7.5}};
    const auto smoothed = smooth_debiased_ema(raw, 0.0);
    for (std::size_t i = 0; i < raw.size(); ++i) EXPECT_EQ(smoothed[i].value, raw[i].value);
}

TEST(BrailleChart, ema_of_a_constant_series_is_exactly_constant) {
    const std::vector<SeriesPoint> raw(50, SeriesPoint{0, 0.1});
    for (const auto& p : smooth_debiased_ema(raw, 0.99)) EXPECT_EQ(p.value, 0.1);
}

}  // namespace
}  // namespace msmon::tui
