// Text from files, made safe to show: control bytes, bidi overrides and invalid UTF-8 become visible escapes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace msmon {

// Valid printable UTF-8 is kept; everything else is shown as \xNN (bytes) or \u{XXXX} (bidi/format marks).
// At most max_bytes of input are looked at; "…" marks a cut.
std::string escape_for_display(std::string_view text, std::size_t max_bytes = std::string_view::npos);

}  // namespace msmon
