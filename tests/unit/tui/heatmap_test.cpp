// Unit tests for tui/widgets/heatmap: colour levels, the ASCII ramp, NaN marks and ranks sharing rows.
#include "tui/widgets/heatmap.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace msmon::tui {
namespace {

ColumnStat value(double v) {
    ColumnStat c;
    c.count = 1;
    c.min = c.max = c.last = v;
    return c;
}

std::vector<ColumnStat> row_of(std::initializer_list<double> values) {
    std::vector<ColumnStat> out;
    for (double v : values) out.push_back(value(v));
    return out;
}

const Glyphs kColour{true, true};
const Glyphs kMono{true, false};
const Glyphs kAscii{false, true};

TEST(Heatmap, values_map_to_heat_backgrounds_from_cold_to_hot) {
    const std::vector<std::vector<ColumnStat>> rows = {row_of({0, 1, 2, 3, 4, 5, 6, 7})};
    ScreenBuffer buf(8, 1);
    draw_heatmap(buf, 0, 0, 8, 1, rows, kColour, {});
    const Color heat[] = {Color::heat0, Color::heat1, Color::heat2, Color::heat3,
                          Color::heat4, Color::heat5, Color::heat6, Color::heat7};
    for (int x = 0; x < 8; ++x) {
        EXPECT_EQ(buf.at(x, 0).ch, U' ');
        EXPECT_EQ(buf.at(x, 0).style.bg, heat[x]) << x;
    }
}

TEST(Heatmap, without_colour_the_ramp_is_the_glyph) {
    const std::vector<std::vector<ColumnStat>> rows = {row_of({0, 1, 2, 3, 4, 5, 6, 7})};
    for (const Glyphs& g : {kMono, kAscii}) {
        ScreenBuffer buf(8, 1);
        draw_heatmap(buf, 0, 0, 8, 1, rows, g, {});
        EXPECT_EQ(buf.to_text(), " .:-=+*#");
        EXPECT_EQ(buf.at(7, 0).style.bg, Color::none);
    }
}

TEST(Heatmap, ascii_output_has_only_ascii_bytes) {
    std::vector<std::vector<ColumnStat>> rows;
    for (int r = 0; r < 6; ++r) rows.push_back(row_of({1.0 * r, 2.0, 3.0 * r, 0.5}));
    rows[2][1].has_nan = true;
    rows[3][2].has_neg_inf = true;
    ScreenBuffer buf(10, 6);
    draw_heatmap(buf, 0, 0, 10, 6, rows, kAscii, {});
    for (unsigned char b : buf.to_text()) EXPECT_LT(b, 0x80);
}

TEST(Heatmap, nan_and_infinities_are_marked_in_bad_colour) {
    std::vector<std::vector<ColumnStat>> rows = {row_of({1, 2, 3, 4})};
    rows[0][1].has_nan = true;
    rows[0][2].has_pos_inf = true;
    rows[0][3].has_neg_inf = true;
    ScreenBuffer buf(4, 1);
    draw_heatmap(buf, 0, 0, 4, 1, rows, kColour, {});
    EXPECT_EQ(buf.to_text(), " !^v");
    for (int x = 1; x < 4; ++x) EXPECT_EQ(buf.at(x, 0).style.fg, Color::bad);
}

TEST(Heatmap, an_outlier_rank_among_1024_survives_sharing_a_screen_row) {
    std::vector<std::vector<ColumnStat>> rows(1024, row_of({1, 1, 1, 1, 1}));
    rows[517][3] = value(100);
    rows[900][0].has_nan = true;
    ScreenBuffer buf(5, 10);
    draw_heatmap(buf, 0, 0, 5, 10, rows, kColour, {});
    const int outlier_row = 517 * 10 / 1024;
    const int nan_row = 900 * 10 / 1024;
    for (int y = 0; y < 10; ++y)
        for (int x = 0; x < 5; ++x) {
            if (y == nan_row && x == 0) {
                EXPECT_EQ(buf.at(x, y).ch, U'!');
            } else {
                EXPECT_EQ(buf.at(x, y).style.bg, y == outlier_row && x == 3 ? Color::heat7 : Color::heat0)
                    << x << "," << y;
            }
        }
}

TEST(Heatmap, every_rank_lands_on_exactly_one_screen_row) {
    // One hot rank at a time: whichever it is, exactly one cell turns hot.
    for (int hot : {0, 1, 2, 6, 7, 8, 9, 10}) {
        std::vector<std::vector<ColumnStat>> rows(11, row_of({0}));
        rows[static_cast<std::size_t>(hot)][0] = value(1);
        ScreenBuffer buf(1, 4);
        draw_heatmap(buf, 0, 0, 1, 4, rows, kColour, {});
        int hot_cells = 0;
        for (int y = 0; y < 4; ++y) hot_cells += buf.at(0, y).style.bg == Color::heat7;
        EXPECT_EQ(hot_cells, 1) << hot;
    }
}

TEST(Heatmap, log_scale_spreads_decades) {
    const std::vector<std::vector<ColumnStat>> rows = {row_of({1, 10, 100, 0})};
    HeatmapOptions options;
    options.log_scale = true;
    ScreenBuffer buf(4, 1);
    draw_heatmap(buf, 0, 0, 4, 1, rows, kMono, options);
    EXPECT_EQ(buf.to_text(), " =#");  // levels 0, 4, 7; the non-positive last cell is lowest (blank)
}

TEST(Heatmap, explicit_range_fixes_the_colours) {
    const std::vector<std::vector<ColumnStat>> rows = {row_of({5, 5})};
    HeatmapOptions options;
    options.lo = 0;
    options.hi = 10;
    ScreenBuffer buf(2, 1);
    draw_heatmap(buf, 0, 0, 2, 1, rows, kColour, options);
    EXPECT_EQ(buf.at(0, 0).style.bg, Color::heat4);
}

TEST(Heatmap, empty_columns_have_no_background) {
    std::vector<std::vector<ColumnStat>> rows = {row_of({1, 2, 3})};
    rows[0][1] = ColumnStat{};
    ScreenBuffer buf(3, 1);
    draw_heatmap(buf, 0, 0, 3, 1, rows, kColour, {});
    EXPECT_EQ(buf.at(1, 0).style.bg, Color::none);
    EXPECT_EQ(buf.at(2, 0).style.bg, Color::heat7);
}

TEST(Heatmap, draws_nothing_outside_its_rectangle) {
    std::vector<std::vector<ColumnStat>> rows(50, row_of({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
    for (int w = 0; w <= 14; w += 2)
        for (int h = 0; h <= 6; ++h) {
            ScreenBuffer buf(20, 10);
            buf.fill(0, 0, 20, 10, U'@');
            draw_heatmap(buf, 3, 2, w, h, rows, kColour, {});
            for (int y = 0; y < 10; ++y)
                for (int x = 0; x < 20; ++x) {
                    const bool inside = x >= 3 && x < 3 + w && y >= 2 && y < 2 + h;
                    if (!inside) {
                        EXPECT_EQ(buf.at(x, y).ch, U'@') << w << "x" << h << " at " << x << "," << y;
                    }
                }
        }
}

TEST(Heatmap, newest_columns_kept_at_the_right_edge_when_too_many) {
    const std::vector<std::vector<ColumnStat>> rows = {row_of({0, 0, 0, 7})};
    ScreenBuffer buf(2, 1);
    draw_heatmap(buf, 0, 0, 2, 1, rows, kMono, {});
    EXPECT_EQ(buf.to_text(), " #");
}

}  // namespace
}  // namespace msmon::tui
