// Unit tests for core/text/display_escape: nothing from the data reaches a terminal raw.
#include "core/text/display_escape.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>

namespace msmon {
namespace {

const std::string kEllipsis = "\xE2\x80\xA6";

// Decodes strictly valid UTF-8; false on any invalid sequence.
bool decode_utf8(std::string_view s, std::u32string& out) {
    out.clear();
    for (std::size_t i = 0; i < s.size();) {
        const auto b0 = static_cast<unsigned char>(s[i]);
        std::size_t len = b0 < 0x80             ? 1
                          : (b0 & 0xE0) == 0xC0 ? 2
                          : (b0 & 0xF0) == 0xE0 ? 3
                          : (b0 & 0xF8) == 0xF0 ? 4
                                                : 0;
        if (len == 0 || i + len > s.size()) return false;
        std::uint32_t cp = len == 1 ? b0 : len == 2 ? (b0 & 0x1Fu) : len == 3 ? (b0 & 0x0Fu) : (b0 & 0x07u);
        for (std::size_t k = 1; k < len; ++k) {
            const auto b = static_cast<unsigned char>(s[i + k]);
            if ((b & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (b & 0x3Fu);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        out.push_back(cp);
        i += len;
    }
    return true;
}

bool is_dangerous(std::uint32_t cp) {
    return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0) || (cp >= 0x200B && cp <= 0x200F) ||
           (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF || cp == 0x061C;
}

// The output is valid UTF-8 with no control, C1, bidi or zero-width code point in it.
void expect_terminal_safe(std::string_view input, const std::string& out) {
    for (char c : out) {
        const auto b = static_cast<unsigned char>(c);
        ASSERT_FALSE(b < 0x20 || b == 0x7F) << "raw control byte in output for input of " << input.size() << " bytes";
    }
    std::u32string cps;
    ASSERT_TRUE(decode_utf8(out, cps)) << "output is not valid UTF-8";
    for (char32_t cp : cps)
        ASSERT_FALSE(is_dangerous(cp)) << "dangerous code point U+" << std::hex << static_cast<std::uint32_t>(cp);
}

TEST(DisplayEscape, printable_ascii_is_kept) {
    EXPECT_EQ(escape_for_display("module.decoder.layers.0.mlp [4096, 1]"), "module.decoder.layers.0.mlp [4096, 1]");
    EXPECT_EQ(escape_for_display(""), "");
}

TEST(DisplayEscape, valid_utf8_chinese_text_is_kept) {
    const std::string text = "\xE8\xAE\xAD\xE7\xBB\x83\xE6\x8D\x9F\xE5\xA4\xB1 ok";  // "训练损失 ok"
    EXPECT_EQ(escape_for_display(text), text);
    const std::string emoji = "\xF0\x9F\x94\xA5";  // U+1F525, 4-byte sequence
    EXPECT_EQ(escape_for_display(emoji), emoji);
}

TEST(DisplayEscape, escape_and_csi_sequences_become_visible) {
    const std::string out = escape_for_display("\x1B[31mred\x1B[0m\x1B]0;title\x07");
    EXPECT_EQ(out, "\\x1B[31mred\\x1B[0m\\x1B]0;title\\x07");
    expect_terminal_safe("csi", out);
}

TEST(DisplayEscape, c1_controls_are_escaped_whether_encoded_or_raw) {
    EXPECT_EQ(escape_for_display("a\xC2\x9B"
                                 "31mb"),
              "a\\x9B31mb");                             // U+009B CSI as UTF-8
    EXPECT_EQ(escape_for_display("\xC2\x85"), "\\x85");  // U+0085 NEL
    EXPECT_EQ(escape_for_display("\x9B"), "\\x9B");      // raw C1 byte: invalid UTF-8
}

TEST(DisplayEscape, bidi_override_and_invisible_marks_are_escaped) {
    EXPECT_EQ(escape_for_display("abc\xE2\x80\xAE"
                                 "def"),
              "abc\\u{202E}def");                                // U+202E RLO
    EXPECT_EQ(escape_for_display("\xE2\x81\xA6"), "\\u{2066}");  // U+2066 LRI
    EXPECT_EQ(escape_for_display("\xE2\x80\x8B"), "\\u{200B}");  // zero-width space
    EXPECT_EQ(escape_for_display("\xEF\xBB\xBF"
                                 "x"),
              "\\u{FEFF}x");                                 // BOM
    EXPECT_EQ(escape_for_display("\xD8\x9C"), "\\u{061C}");  // Arabic letter mark
}

TEST(DisplayEscape, invalid_utf8_bytes_are_escaped_one_by_one) {
    EXPECT_EQ(escape_for_display("a\xFF\xFE"
                                 "b"),
              "a\\xFF\\xFEb");
    EXPECT_EQ(escape_for_display("\xC0\xAF"), "\\xC0\\xAF");                    // overlong '/'
    EXPECT_EQ(escape_for_display("\xED\xA0\x80"), "\\xED\\xA0\\x80");           // UTF-16 surrogate
    EXPECT_EQ(escape_for_display("\xE8\xAE"), "\\xE8\\xAE");                    // truncated sequence
    EXPECT_EQ(escape_for_display("\xF4\x90\x80\x80"), "\\xF4\\x90\\x80\\x80");  // above U+10FFFF
}

TEST(DisplayEscape, backslash_is_doubled_so_escapes_are_unambiguous) {
    EXPECT_EQ(escape_for_display("a\\b"), "a\\\\b");
    // A literal "\x1B" in the data must not look like an escaped ESC byte.
    EXPECT_NE(escape_for_display("\\x1B"), escape_for_display("\x1B"));
}

TEST(DisplayEscape, whitespace_controls_use_short_escapes) {
    EXPECT_EQ(escape_for_display("a\tb\nc\rd"), "a\\tb\\nc\\rd");
    EXPECT_EQ(escape_for_display(std::string_view("\0", 1)), "\\x00");
    EXPECT_EQ(escape_for_display("\x7F"), "\\x7F");
}

TEST(DisplayEscape, every_single_byte_comes_out_terminal_safe) {
    for (int b = 0; b < 256; ++b) {
        const std::string in(1, static_cast<char>(b));
        expect_terminal_safe(in, escape_for_display(in));
    }
}

TEST(DisplayEscape, random_bytes_come_out_terminal_safe) {
    std::mt19937 rng(1234);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_int_distribution<int> length(0, 64);
    for (int i = 0; i < 20000; ++i) {
        std::string in;
        const int n = length(rng);
        for (int k = 0; k < n; ++k) in.push_back(static_cast<char>(byte(rng)));
        expect_terminal_safe(in, escape_for_display(in));
        expect_terminal_safe(in, escape_for_display(in, 10));
    }
}

TEST(DisplayEscape, max_bytes_cut_adds_an_ellipsis) {
    EXPECT_EQ(escape_for_display("abcdef", 3), "abc" + kEllipsis);
    EXPECT_EQ(escape_for_display("abc", 3), "abc");
    EXPECT_EQ(escape_for_display("abc", 10), "abc");
    EXPECT_EQ(escape_for_display("abc", 0), kEllipsis);
}

TEST(DisplayEscape, max_bytes_counts_input_bytes_not_output_bytes) {
    EXPECT_EQ(escape_for_display("\x1B\x1B\x1Bxyz", 3), "\\x1B\\x1B\\x1B" + kEllipsis);
}

TEST(DisplayEscape, cut_inside_a_utf8_character_does_not_invent_an_invalid_byte) {
    const std::string text = "\xE8\xAE\xAD\xE7\xBB\x83";  // "训练", two 3-byte characters
    const std::string out = escape_for_display(text, 4);
    EXPECT_EQ(out.find("\\x"), std::string::npos) << out;
    EXPECT_EQ(out, "\xE8\xAE\xAD" + kEllipsis);
}

}  // namespace
}  // namespace msmon
