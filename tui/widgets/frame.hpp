// A box's border: light lines with a UTF-8 terminal, + - | in ASCII. Dialogs and the help overlay draw one so
// the view behind them does not read as part of them.
#pragma once

#include "tui/screen_buffer.hpp"

namespace msmon::tui {

// The border of the w×h box whose top-left cell is (x0, y0); the inside is left as it is.
void draw_frame(ScreenBuffer& buf, int x0, int y0, int w, int h, bool unicode, Style style);

}  // namespace msmon::tui
