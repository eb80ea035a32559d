// Text in lines of a given width: the help overlay and the anomaly detail pane.
#pragma once

#include <string>
#include <vector>

namespace msmon::tui {

// `text` in lines of at most `width` columns, cut at the last space that fits where there is one, else at the
// width; never fewer than one line. Widths of 8 or less give the text whole.
std::vector<std::string> wrap_text(const std::string& text, int width);

}  // namespace msmon::tui
