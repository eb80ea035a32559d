// Box borders.
#include "tui/widgets/frame.hpp"

namespace msmon::tui {

void draw_frame(ScreenBuffer& buf, int x0, int y0, int w, int h, bool unicode, Style style) {
    if (w < 2 || h < 2) return;
    const bool u = unicode;
    for (int x = x0 + 1; x < x0 + w - 1; ++x) {
        buf.put(x, y0, u ? U'─' : U'-', style);
        buf.put(x, y0 + h - 1, u ? U'─' : U'-', style);
    }
    for (int y = y0 + 1; y < y0 + h - 1; ++y) {
        buf.put(x0, y, u ? U'│' : U'|', style);
        buf.put(x0 + w - 1, y, u ? U'│' : U'|', style);
    }
    buf.put(x0, y0, u ? U'┌' : U'+', style);
    buf.put(x0 + w - 1, y0, u ? U'┐' : U'+', style);
    buf.put(x0, y0 + h - 1, u ? U'└' : U'+', style);
    buf.put(x0 + w - 1, y0 + h - 1, u ? U'┘' : U'+', style);
}

}  // namespace msmon::tui
