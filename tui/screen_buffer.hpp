// A grid of cells that views draw into: no curses here, so drawing is pure, testable and snapshot-able.
// The app copies a finished buffer to the terminal in one go.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace msmon::tui {

// Palette entries views use; the terminal maps them to colours (or to attributes without colour).
enum class Color : std::uint8_t {
    none,
    dim,
    accent,
    good,
    warn,
    bad,
    series0,
    series1,
    series2,
    series3,
    series4,
    series5,
    heat0,
    heat1,
    heat2,
    heat3,
    heat4,
    heat5,
    heat6,
    heat7
};

enum Attr : std::uint8_t { kPlain = 0, kBold = 1, kDim = 2, kReverse = 4, kUnderline = 8 };

struct Style {
    Color fg = Color::none;
    Color bg = Color::none;
    std::uint8_t attr = kPlain;
    bool operator==(const Style&) const = default;
};

struct Cell {
    char32_t ch = U' ';
    Style style;
    bool operator==(const Cell&) const = default;
};

// Which glyphs the terminal can show: Unicode (Braille, blocks) with a UTF-8 locale, ASCII otherwise.
struct Glyphs {
    bool unicode = true;
    bool color = true;  // false (NO_COLOR, no colours): widgets that encode values in colour use glyphs instead
};

class ScreenBuffer {
public:
    ScreenBuffer(int width, int height);
    int width() const { return width_; }
    int height() const { return height_; }
    void clear();
    // Out-of-range cells are ignored (drawing clips, never overflows).
    void put(int x, int y, char32_t ch, Style style = {});
    // Draws UTF-8 text from column x in at most max_width columns (and up to the right edge); returns columns used.
    // Text that does not fit is cut with kCutMark ("…", "~" in ASCII) in its last column, so a cut never reads as
    // a whole word; only spaces past the edge are dropped unmarked. Control characters and invalid UTF-8 are drawn
    // escaped: nothing from the data reaches the terminal raw.
    int text(int x, int y, std::string_view utf8, Style style = {}, int max_width = 1 << 30);
    void fill(int x, int y, int w, int h, char32_t ch, Style style = {});
    const Cell& at(int x, int y) const { return cells_[static_cast<std::size_t>(y * width_ + x)]; }
    // Rows as UTF-8 text, trailing spaces trimmed, joined with '\n' (for --snapshot and tests). Without unicode,
    // each cell as the terminal shows it then: its ascii_stand_in, and '?' for each half of a wide character.
    std::string to_text(bool unicode = true) const;

private:
    int width_, height_;
    std::vector<Cell> cells_;
};

// Display width of a UTF-8 string after escaping (what ScreenBuffer::text would use without clipping).
int display_width(std::string_view utf8);

}  // namespace msmon::tui
