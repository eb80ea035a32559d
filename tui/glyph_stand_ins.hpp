// The ASCII stand-in of every glyph msmon-tui draws, in one table. Without a UTF-8 locale the terminal and
// --snapshot show each cell's stand-in, so a glyph a view draws (or a message from the data carries: "×", "→")
// never reaches the screen as '?'. A stand-in takes one cell, as its glyph does, so columns line up.
#pragma once

#include <string>

namespace msmon::tui {

// What a cut of text shows where the text went on: "…" in the buffer, "~" in ASCII (ascii_stand_in).
inline constexpr char32_t kCutMark = U'\u2026';
inline constexpr char kCutMarkAscii = '~';

// The printable ASCII character shown for `cp`: `cp` itself below 0x80, its stand-in for a glyph in the table
// (braille dots, block elements and box drawing included), '?' for anything else (text from the data in other
// scripts, which has no ASCII form).
char ascii_stand_in(char32_t cp);

// `cp` where the terminal shows Unicode, its ASCII stand-in otherwise: what a view draws for a glyph.
char32_t glyph(char32_t cp, bool unicode);

// glyph() as UTF-8 text, for views that build strings.
std::string glyph_text(char32_t cp, bool unicode);

}  // namespace msmon::tui
