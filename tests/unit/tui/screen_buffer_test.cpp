// Unit tests for tui/screen_buffer: UTF-8 text, escaping, wide characters, clipping and the text snapshot.
#include "tui/screen_buffer.hpp"

#include <gtest/gtest.h>

#include <string>

namespace msmon::tui {
namespace {

std::string row_text(const ScreenBuffer& buf, int y) {
    const std::string all = buf.to_text();
    std::size_t start = 0;
    for (int i = 0; i < y; ++i) start = all.find('\n', start) + 1;
    const std::size_t end = all.find('\n', start);
    return all.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST(ScreenBuffer, starts_blank_and_to_text_trims_trailing_spaces) {
    ScreenBuffer buf(5, 3);
    EXPECT_EQ(buf.to_text(), "\n\n");
    buf.put(1, 1, U'x');
    EXPECT_EQ(buf.to_text(), "\n x\n");
}

TEST(ScreenBuffer, put_outside_the_grid_is_ignored) {
    ScreenBuffer buf(3, 2);
    buf.put(-1, 0, U'a');
    buf.put(3, 0, U'b');
    buf.put(0, -1, U'c');
    buf.put(0, 2, U'd');
    EXPECT_EQ(buf.to_text(), "\n");
}

TEST(ScreenBuffer, text_returns_columns_used_and_keeps_style) {
    ScreenBuffer buf(10, 1);
    const Style style{Color::accent, Color::none, kBold};
    EXPECT_EQ(buf.text(2, 0, "abc", style), 3);
    EXPECT_EQ(buf.to_text(), "  abc");
    EXPECT_EQ(buf.at(3, 0).ch, U'b');
    EXPECT_EQ(buf.at(3, 0).style, style);
    EXPECT_EQ(buf.at(5, 0).style, Style{});
}

TEST(ScreenBuffer, text_cut_at_max_width_or_the_right_edge_ends_with_the_cut_mark) {
    ScreenBuffer buf(6, 3);
    EXPECT_EQ(buf.text(0, 0, "abcdef", {}, 4), 4);
    EXPECT_EQ(buf.text(3, 1, "uvwxyz"), 3);
    EXPECT_EQ(buf.text(0, 2, "abcdef", {}, 6), 6);
    EXPECT_EQ(buf.to_text(), "abc\u2026\n   uv\u2026\nabcdef") << "text that fits exactly is whole";
}

TEST(ScreenBuffer, spaces_past_the_edge_are_dropped_without_a_mark) {
    ScreenBuffer buf(6, 1);
    EXPECT_EQ(buf.text(0, 0, "abc       ", {}, 5), 5);
    EXPECT_EQ(buf.to_text(), "abc");
}

TEST(ScreenBuffer, without_unicode_to_text_shows_each_cells_ascii_stand_in) {
    ScreenBuffer buf(12, 1);
    buf.text(0, 0, "a\u2192b \u00D7\u2014\u65E5x");  // a→b ×—日x
    EXPECT_EQ(buf.to_text(false), "a>b x-??x");
    EXPECT_EQ(buf.to_text(true), "a\u2192b \u00D7\u2014\u65E5x");
    buf.text(0, 0, "abcdefghijklmn");
    EXPECT_EQ(buf.to_text(false), "abcdefghijk~");
}

TEST(ScreenBuffer, text_on_a_row_outside_the_grid_draws_nothing) {
    ScreenBuffer buf(4, 1);
    buf.text(0, 1, "abcd");
    buf.text(0, -1, "abcd");
    EXPECT_EQ(buf.to_text(), "");
}

TEST(ScreenBuffer, cjk_characters_take_two_cells_and_round_trip_through_to_text) {
    ScreenBuffer buf(10, 1);
    EXPECT_EQ(buf.text(0, 0, "日本a"), 5);
    EXPECT_EQ(buf.at(0, 0).ch, U'日');
    EXPECT_EQ(buf.at(2, 0).ch, U'本');
    EXPECT_EQ(buf.at(4, 0).ch, U'a');
    EXPECT_EQ(buf.to_text(), "日本a");
}

TEST(ScreenBuffer, wide_character_that_does_not_fit_the_last_column_is_not_drawn_half) {
    ScreenBuffer buf(5, 1);
    buf.fill(0, 0, 5, 1, U'#');
    EXPECT_EQ(buf.text(0, 0, "a日本語"), 4);
    EXPECT_EQ(buf.to_text(), "a日…#") << "本 would reach the mark's column: left out";
    EXPECT_EQ(buf.at(4, 0).ch, U'#');
}

TEST(ScreenBuffer, put_of_a_wide_character_in_the_last_column_draws_nothing) {
    ScreenBuffer buf(3, 1);
    buf.fill(0, 0, 3, 1, U'#');
    buf.put(2, 0, U'語');
    buf.put(0, 0, U'語');
    EXPECT_EQ(buf.to_text(), "語#");
    EXPECT_EQ(buf.at(2, 0).ch, U'#');
}

TEST(ScreenBuffer, wide_character_cut_by_max_width_is_left_out) {
    ScreenBuffer buf(10, 1);
    buf.fill(0, 0, 10, 1, U'.');
    EXPECT_EQ(buf.text(0, 0, "a日本語", {}, 5), 4);
    EXPECT_EQ(buf.to_text(), "a日…......");
}

TEST(ScreenBuffer, overwriting_half_of_a_wide_character_blanks_the_other_half) {
    ScreenBuffer buf(6, 2);
    buf.text(0, 0, "日本");
    buf.put(1, 0, U'x');  // the right half of 日
    EXPECT_EQ(row_text(buf, 0), " x本");
    buf.text(0, 1, "日本");
    buf.put(2, 1, U'y');  // the left half of 本
    EXPECT_EQ(row_text(buf, 1), "日y");
    // The row's text is as wide as the cells it came from: nothing shifted.
    EXPECT_EQ(display_width(row_text(buf, 0)), 4);
}

TEST(ScreenBuffer, control_characters_are_drawn_escaped_never_raw) {
    ScreenBuffer buf(60, 1);
    buf.text(0, 0, "a\x1b[31mred\x07\tb");
    const std::string text = buf.to_text();
    EXPECT_EQ(text.find('\x1b'), std::string::npos);
    EXPECT_EQ(text.find('\x07'), std::string::npos);
    EXPECT_EQ(text.find('\t'), std::string::npos);
    EXPECT_EQ(text, "a\\x1B[31mred\\x07\\tb");
}

TEST(ScreenBuffer, c1_csi_and_bidi_override_are_escaped) {
    ScreenBuffer buf(60, 1);
    buf.text(0, 0,
             "x\xC2\x9B"
             "2J\xE2\x80\xAE"
             "evil");
    const std::string text = buf.to_text();
    EXPECT_EQ(text.find("\xC2\x9B"), std::string::npos);
    EXPECT_EQ(text.find("\xE2\x80\xAE"), std::string::npos);
    EXPECT_EQ(text, "x\\x9B2J\\u{202E}evil");
}

TEST(ScreenBuffer, invalid_utf8_is_escaped_byte_by_byte) {
    ScreenBuffer buf(30, 1);
    EXPECT_EQ(buf.text(0, 0, "a\xFF\xC3"), 9);
    EXPECT_EQ(buf.to_text(), "a\\xFF\\xC3");
}

TEST(ScreenBuffer, put_of_a_control_character_stores_a_visible_substitute) {
    ScreenBuffer buf(3, 1);
    buf.put(0, 0, U'\x1b');
    buf.put(1, 0, 0);
    EXPECT_EQ(buf.to_text(), "??");
}

TEST(ScreenBuffer, combining_marks_take_no_column) {
    ScreenBuffer buf(5, 1);
    EXPECT_EQ(buf.text(0, 0, "e\xCC\x81x"), 2);  // e + COMBINING ACUTE + x
    EXPECT_EQ(buf.to_text(), "ex");
    EXPECT_EQ(display_width("e\xCC\x81x"), 2);
}

TEST(ScreenBuffer, display_width_counts_wide_and_escaped_text) {
    EXPECT_EQ(display_width("abc"), 3);
    EXPECT_EQ(display_width("日本語"), 6);
    EXPECT_EQ(display_width("\x1b"), 4);          // "\x1B"
    EXPECT_EQ(display_width("\xEF\xBC\xA1"), 2);  // FULLWIDTH A
    EXPECT_EQ(display_width("é"), 1);
}

TEST(ScreenBuffer, fill_clips_to_the_grid) {
    ScreenBuffer buf(4, 3);
    buf.fill(2, 1, 10, 10, U'x');
    buf.fill(-5, -5, 6, 6, U'o');
    EXPECT_EQ(buf.to_text(), "o\n  xx\n  xx");
}

TEST(ScreenBuffer, clear_blanks_every_cell) {
    ScreenBuffer buf(3, 2);
    buf.text(0, 0, "日x", {Color::bad});
    buf.clear();
    EXPECT_EQ(buf.to_text(), "\n");
    EXPECT_EQ(buf.at(0, 0), Cell{});
}

TEST(ScreenBuffer, zero_size_buffer_is_harmless) {
    ScreenBuffer buf(0, 0);
    buf.put(0, 0, U'x');
    EXPECT_EQ(buf.text(0, 0, "abc"), 0);
    EXPECT_EQ(buf.to_text(), "");
}

}  // namespace
}  // namespace msmon::tui
