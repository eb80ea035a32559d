// UTF-8 code points: encoding one, and stepping over one in either direction (text typed by a person).
#pragma once

#include <cstddef>
#include <string>

namespace msmon {

inline void append_utf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

inline bool utf8_continuation(char c) {
    return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// The byte offset of the code point before / after the one at `at` (clamped to the string).
inline std::size_t utf8_prev(const std::string& s, std::size_t at) {
    if (at == 0) return 0;
    --at;
    while (at > 0 && utf8_continuation(s[at])) --at;
    return at;
}

inline std::size_t utf8_next(const std::string& s, std::size_t at) {
    if (at >= s.size()) return s.size();
    ++at;
    while (at < s.size() && utf8_continuation(s[at])) ++at;
    return at;
}

}  // namespace msmon
