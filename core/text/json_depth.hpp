// How deep a JSON text nests, found before it is parsed: nlohmann's parser is iterative, but what walks or prints
// a document (dump, validation, destruction of some shapes) recurses once per level, so 70,000 nested objects in a
// monitor config crashed `msmon config show` (SIGSEGV). Files msmon reads are refused beyond kMaxJsonDepth.
#pragma once

#include <string_view>

namespace msmon {

// msprobe's configs nest ~5 levels, module_struct.json and anomaly dumps fewer than 20.
inline constexpr int kMaxJsonDepth = 256;

// False if arrays and objects in `text` nest deeper than `max_depth` (strings and their escapes skipped).
inline bool json_depth_within(std::string_view text, int max_depth = kMaxJsonDepth) {
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            if (++depth > max_depth) return false;
        } else if (c == '}' || c == ']') {
            --depth;
        }
    }
    return true;
}

}  // namespace msmon
