// The cell grid views draw into: UTF-8 decoding, escaping, display widths and clipping live here.
#include "tui/screen_buffer.hpp"

#include <algorithm>
#include <iterator>

#include "core/text/display_escape.hpp"
#include "core/text/utf8.hpp"
#include "tui/glyph_stand_ins.hpp"

namespace msmon::tui {

namespace {

// A wide character occupies its cell and the next one; the next one holds this marker (to_text skips it).
constexpr char32_t kContinuation = 0;

struct Range {
    char32_t lo, hi;
};

// East Asian Wide and Fullwidth blocks (and emoji that terminals draw two columns wide). A fixed table, not
// wcwidth(): the result must not depend on the process locale, and tests must see what the terminal sees.
constexpr Range kWide[] = {
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},   {0x23F0, 0x23F0},
    {0x23F3, 0x23F3},   {0x25FD, 0x25FE},   {0x2614, 0x2615},   {0x2648, 0x2653},   {0x267F, 0x267F},
    {0x2693, 0x2693},   {0x26A1, 0x26A1},   {0x26AA, 0x26AB},   {0x26BD, 0x26BE},   {0x26C4, 0x26C5},
    {0x26CE, 0x26CE},   {0x26D4, 0x26D4},   {0x26EA, 0x26EA},   {0x26F2, 0x26F3},   {0x26F5, 0x26F5},
    {0x26FA, 0x26FA},   {0x26FD, 0x26FD},   {0x2705, 0x2705},   {0x270A, 0x270B},   {0x2728, 0x2728},
    {0x274C, 0x274C},   {0x274E, 0x274E},   {0x2753, 0x2755},   {0x2757, 0x2757},   {0x2795, 0x2797},
    {0x27B0, 0x27B0},   {0x27BF, 0x27BF},   {0x2B1B, 0x2B1C},   {0x2B50, 0x2B50},   {0x2B55, 0x2B55},
    {0x2E80, 0x303E},   {0x3041, 0x33FF},   {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},
    {0xA960, 0xA97F},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},   {0xFE10, 0xFE19},   {0xFE30, 0xFE6F},
    {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x16FE0, 0x16FE4}, {0x17000, 0x18CFF}, {0x1B000, 0x1B2FF},
    {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A}, {0x1F200, 0x1F2FF},
    {0x1F300, 0x1F320}, {0x1F32D, 0x1F335}, {0x1F337, 0x1F37C}, {0x1F37E, 0x1F393}, {0x1F3A0, 0x1F3CA},
    {0x1F3CF, 0x1F3D3}, {0x1F3E0, 0x1F3F0}, {0x1F3F4, 0x1F3F4}, {0x1F3F8, 0x1F43E}, {0x1F440, 0x1F440},
    {0x1F442, 0x1F4FC}, {0x1F4FF, 0x1F53D}, {0x1F54B, 0x1F54E}, {0x1F550, 0x1F567}, {0x1F57A, 0x1F57A},
    {0x1F595, 0x1F596}, {0x1F5A4, 0x1F5A4}, {0x1F5FB, 0x1F64F}, {0x1F680, 0x1F6C5}, {0x1F6CC, 0x1F6CC},
    {0x1F6D0, 0x1F6D2}, {0x1F6D5, 0x1F6D7}, {0x1F6DC, 0x1F6DF}, {0x1F6EB, 0x1F6EC}, {0x1F6F4, 0x1F6FC},
    {0x1F7E0, 0x1F7EB}, {0x1F7F0, 0x1F7F0}, {0x1F90C, 0x1F93A}, {0x1F93C, 0x1F945}, {0x1F947, 0x1F9FF},
    {0x1FA70, 0x1FAFF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
};

// Combining marks and other zero-width characters: they would merge into the previous cell on a terminal,
// and a cell holds one character, so text() leaves them out.
constexpr Range kZeroWidth[] = {
    {0x0300, 0x036F},   {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x05BF, 0x05BF}, {0x05C1, 0x05C2}, {0x05C4, 0x05C5},
    {0x05C7, 0x05C7},   {0x0610, 0x061A}, {0x064B, 0x065F}, {0x0670, 0x0670}, {0x06D6, 0x06DC}, {0x06DF, 0x06E4},
    {0x06E7, 0x06E8},   {0x06EA, 0x06ED}, {0x0E31, 0x0E31}, {0x0E34, 0x0E3A}, {0x0E47, 0x0E4E}, {0x1160, 0x11FF},
    {0x1AB0, 0x1AFF},   {0x1DC0, 0x1DFF}, {0x200B, 0x200F}, {0x2028, 0x202E}, {0x2060, 0x206F}, {0x20D0, 0x20FF},
    {0x302A, 0x302D},   {0x3099, 0x309A}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F}, {0xFEFF, 0xFEFF}, {0x1F3FB, 0x1F3FF},
    {0xE0000, 0xE0FFF},
};

template <std::size_t N>
bool in_table(const Range (&table)[N], char32_t cp) {
    const auto it =
        std::upper_bound(std::begin(table), std::end(table), cp, [](char32_t c, const Range& r) { return c < r.lo; });
    return it != std::begin(table) && cp <= std::prev(it)->hi;
}

// Columns a code point takes on the terminal: 0, 1 or 2.
int char_width(char32_t cp) {
    if (cp < 0x300) return 1;
    if (in_table(kZeroWidth, cp)) return 0;
    return in_table(kWide, cp) ? 2 : 1;
}

// What put() stores for a code point that must not reach the terminal as is.
bool is_unsafe(char32_t cp) {
    return cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF ||
           char_width(cp) == 0;
}

// Decodes the next code point of valid UTF-8 (escape_for_display's output is valid); advances i.
char32_t next_code_point(std::string_view s, std::size_t& i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    const std::size_t len = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 1;
    if (len == 1 || i + len > s.size()) {
        ++i;
        return b0 < 0x80 ? b0 : U'?';
    }
    char32_t cp = len == 2 ? (b0 & 0x1F) : len == 3 ? (b0 & 0x0F) : (b0 & 0x07);
    for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    i += len;
    return cp;
}

}  // namespace

ScreenBuffer::ScreenBuffer(int width, int height)
    : width_(std::max(width, 0)),
      height_(std::max(height, 0)),
      cells_(static_cast<std::size_t>(width_) * static_cast<std::size_t>(height_)) {}

void ScreenBuffer::clear() {
    std::fill(cells_.begin(), cells_.end(), Cell{});
}

void ScreenBuffer::put(int x, int y, char32_t ch, Style style) {
    if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
    if (is_unsafe(ch)) ch = U'?';
    const bool wide = char_width(ch) == 2;
    if (wide && x + 1 >= width_) return;  // half a wide character is never drawn
    Cell* row = &cells_[static_cast<std::size_t>(y) * static_cast<std::size_t>(width_)];
    // Overwriting half of a wide character leaves its other half as a blank, not as a stray continuation.
    if (row[x].ch == kContinuation && x > 0) row[x - 1].ch = U' ';
    const int last = wide ? x + 1 : x;
    if (last + 1 < width_ && row[last + 1].ch == kContinuation) row[last + 1].ch = U' ';
    row[x] = Cell{ch, style};
    if (wide) row[x + 1] = Cell{kContinuation, style};
}

int ScreenBuffer::text(int x, int y, std::string_view utf8, Style style, int max_width) {
    const std::string safe = escape_for_display(utf8);
    const int limit = std::min(max_width, width_ - x);
    // Where the text is cut, the mark takes the last column: the text stops one column (two, when a wide character
    // would end there) short of the limit.
    const std::size_t kept = safe.find_last_not_of(' ');
    int whole = 0;
    for (std::size_t i = 0; kept != std::string::npos && i <= kept;) whole += char_width(next_code_point(safe, i));
    const bool cut = whole > limit;
    const int room = cut ? limit - 1 : limit;
    int used = 0;
    for (std::size_t i = 0; i < safe.size();) {
        const char32_t cp = next_code_point(safe, i);
        const int w = char_width(cp);
        if (w == 0) continue;
        if (used + w > room) break;
        if (x + used >= 0) put(x + used, y, cp, style);  // a wide character cut by the left edge is skipped
        used += w;
    }
    if (cut && limit > 0) {
        if (x + used >= 0) put(x + used, y, kCutMark, style);
        ++used;
    }
    return std::max(used, 0);
}

void ScreenBuffer::fill(int x, int y, int w, int h, char32_t ch, Style style) {
    const int x0 = std::max(x, 0), y0 = std::max(y, 0);
    const int x1 = std::min(x + w, width_), y1 = std::min(y + h, height_);
    const int step = char_width(ch) == 2 ? 2 : 1;
    for (int row = y0; row < y1; ++row)
        for (int col = x0; col + step <= x1; col += step) put(col, row, ch, style);
}

std::string ScreenBuffer::to_text(bool unicode) const {
    std::string out;
    out.reserve(cells_.size() + static_cast<std::size_t>(height_));
    for (int y = 0; y < height_; ++y) {
        if (y > 0) out += '\n';
        const std::size_t row_start = out.size();
        for (int x = 0; x < width_; ++x) {
            const char32_t ch = at(x, y).ch;
            if (!unicode) out += ch == kContinuation ? '?' : ascii_stand_in(ch);
            else if (ch != kContinuation) append_utf8(out, ch);
        }
        const std::size_t end = out.find_last_not_of(' ');
        out.resize(end == std::string::npos || end < row_start ? row_start : end + 1);
    }
    return out;
}

int display_width(std::string_view utf8) {
    const std::string safe = escape_for_display(utf8);
    int width = 0;
    for (std::size_t i = 0; i < safe.size();) width += char_width(next_code_point(safe, i));
    return width;
}

}  // namespace msmon::tui
