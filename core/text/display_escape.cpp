// Escaping for terminals and logs: nothing from the data reaches a terminal raw.
#include "core/text/display_escape.hpp"

#include <cstdint>
#include <cstdio>

namespace msmon {

namespace {

// Length of a valid UTF-8 sequence at s[i] and its code point, or 0 if invalid.
std::size_t utf8_sequence(std::string_view s, std::size_t i, std::uint32_t& cp) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    std::size_t len = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) return 0;
    cp = len == 1 ? b0 : len == 2 ? (b0 & 0x1F) : len == 3 ? (b0 & 0x0F) : (b0 & 0x07);
    for (std::size_t k = 1; k < len; ++k) {
        const auto b = static_cast<unsigned char>(s[i + k]);
        if ((b >> 6) != 0x2) return 0;
        cp = (cp << 6) | (b & 0x3F);
    }
    const bool overlong = (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

bool is_invisible_control(std::uint32_t cp) {
    return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0) ||  // C0, DEL, C1
           (cp >= 0x200B && cp <= 0x200F) ||                        // zero-width, LRM/RLM
           (cp >= 0x202A && cp <= 0x202E) ||                        // bidi embeddings/overrides
           (cp >= 0x2066 && cp <= 0x2069) ||                        // bidi isolates
           cp == 0xFEFF || cp == 0x061C;
}

// `message`: a line break and a tab stay, a backslash stays single (our own multi-line messages, read by people).
std::string escape(std::string_view text, std::size_t max_bytes, bool message) {
    std::string out;
    const bool cut = text.size() > max_bytes;
    if (cut) {
        // Cut at a character boundary: never invent an invalid byte out of a valid character.
        std::size_t end = max_bytes;
        while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
        text = text.substr(0, end);
    }
    out.reserve(text.size());
    char buf[16];
    for (std::size_t i = 0; i < text.size();) {
        std::uint32_t cp = 0;
        const std::size_t len = utf8_sequence(text, i, cp);
        if (len == 0) {
            std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned char>(text[i]));
            out += buf;
            ++i;
            continue;
        }
        if (message && (cp == '\n' || cp == '\t' || cp == '\\')) {
            out += static_cast<char>(cp);
        } else if (is_invisible_control(cp)) {
            if (cp == '\t') out += "\\t";
            else if (cp == '\n') out += "\\n";
            else if (cp == '\r') out += "\\r";
            else if (cp < 0x100) {
                std::snprintf(buf, sizeof buf, "\\x%02X", cp);
                out += buf;
            } else {
                std::snprintf(buf, sizeof buf, "\\u{%04X}", cp);
                out += buf;
            }
        } else if (cp == '\\') {
            out += "\\\\";
        } else {
            out.append(text.substr(i, len));
        }
        i += len;
    }
    if (cut) out += "\xE2\x80\xA6";
    return out;
}

}  // namespace

std::string escape_for_display(std::string_view text, std::size_t max_bytes) {
    return escape(text, max_bytes, false);
}

std::string escape_for_terminal(std::string_view text) {
    return escape(text, std::string_view::npos, true);
}

}  // namespace msmon
