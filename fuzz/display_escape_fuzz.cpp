// libFuzzer target: escape_for_display. The first two bytes pick max_bytes (0xFFFF = no limit); the output must
// be valid UTF-8 with no control byte, C1 control, bidi or zero-width mark left raw.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/text/display_escape.hpp"

namespace {

void check(bool ok) {
    if (!ok) std::abort();
}

bool raw_forbidden(std::uint32_t cp) {
    return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0) || (cp >= 0x200B && cp <= 0x200F) ||
           (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF || cp == 0x061C;
}

// Strict UTF-8 decoding of the whole output; aborts on any invalid sequence or forbidden code point.
void check_display_safe(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        const auto b0 = static_cast<unsigned char>(s[i]);
        const std::size_t len = b0 < 0x80             ? 1
                                : (b0 & 0xE0) == 0xC0 ? 2
                                : (b0 & 0xF0) == 0xE0 ? 3
                                : (b0 & 0xF8) == 0xF0 ? 4
                                                      : 0;
        check(len != 0 && i + len <= s.size());
        std::uint32_t cp = len == 1 ? b0 : len == 2 ? (b0 & 0x1Fu) : len == 3 ? (b0 & 0x0Fu) : (b0 & 0x07u);
        for (std::size_t k = 1; k < len; ++k) {
            const auto b = static_cast<unsigned char>(s[i + k]);
            check((b & 0xC0) == 0x80);
            cp = (cp << 6) | (b & 0x3Fu);
        }
        check(!((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)));
        check(cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF));
        check(!raw_forbidden(cp));
        i += len;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    const std::size_t limit = static_cast<std::size_t>(data[0]) << 8 | data[1];
    const std::size_t max_bytes = limit == 0xFFFF ? std::string_view::npos : limit;
    const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);

    const std::string out = msmon::escape_for_display(text, max_bytes);
    check_display_safe(out);
    static constexpr std::string_view ellipsis = "\xE2\x80\xA6";
    const bool cut = text.size() > max_bytes;
    if (cut) check(out.size() >= ellipsis.size() && out.substr(out.size() - ellipsis.size()) == ellipsis);
    // Escaping only grows the text: every kept byte is copied, every other byte becomes an escape.
    if (!cut) check(out.size() >= text.size());
    // Unlimited output is the limited output's prefix when nothing was cut.
    if (!cut) check(msmon::escape_for_display(text) == out);
    return 0;
}
