// Text from files, made safe to show: control bytes, bidi overrides and invalid UTF-8 become visible escapes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace msmon {

// Valid printable UTF-8 is kept; everything else is shown as \xNN (bytes) or \u{XXXX} (bidi/format marks).
// At most max_bytes of input are looked at; "…" marks a cut.
std::string escape_for_display(std::string_view text, std::size_t max_bytes = std::string_view::npos);

// A message for a terminal or a log (an error naming a path, a notice quoting a file): as escape_for_display, but
// its line breaks, tabs and backslashes stay as they are. No escape sequence from a file gets through.
std::string escape_for_terminal(std::string_view text);

}  // namespace msmon
