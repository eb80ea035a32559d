// Text in lines of a given width: the help overlay, the anomaly detail pane, the Config tab's notes and dialogs.
#pragma once

#include <string>
#include <vector>

namespace msmon::tui {

// `text` in lines of at most `width` columns, cut at the last space that fits where there is one, else at the
// width; never fewer than one line. Widths of 8 or less give the text whole. With `indent`, every line after the
// first starts with that many spaces (within the width), so a wrapped item reads apart from the next one.
std::vector<std::string> wrap_text(const std::string& text, int width, int indent = 0);

}  // namespace msmon::tui
