// Word wrap by display columns.
#include "tui/widgets/text_wrap.hpp"

#include "tui/screen_buffer.hpp"

namespace msmon::tui {

std::vector<std::string> wrap_text(const std::string& text, int width, int indent) {
    if (indent > 0 && width - indent > 8) {
        std::vector<std::string> out = wrap_text(text, width);
        if (out.size() < 2) return out;
        const std::string first = out.front();
        out = wrap_text(text.substr(first.size() + (text.size() > first.size() && text[first.size()] == ' ' ? 1 : 0)),
                        width - indent);
        for (auto& line : out) line.insert(0, static_cast<std::size_t>(indent), ' ');
        out.insert(out.begin(), first);
        return out;
    }
    std::vector<std::string> out;
    std::string rest = text;
    while (display_width(rest) > width && width > 8) {
        // The last space with at most `width` columns before it (a line may fill the width exactly).
        std::size_t cut = 0, cols = 0;
        for (std::size_t i = 0; i < rest.size() && static_cast<int>(cols) <= width; ++i)
            if ((static_cast<unsigned char>(rest[i]) & 0xC0) != 0x80) {
                if (rest[i] == ' ') cut = i;
                ++cols;
            }
        if (cut == 0) {  // no space: cut at the width
            std::size_t i = 0;
            for (int c = 0; i < rest.size() && c < width; ++i)
                if ((static_cast<unsigned char>(rest[i]) & 0xC0) != 0x80) ++c;
            while (i < rest.size() && (static_cast<unsigned char>(rest[i]) & 0xC0) == 0x80) ++i;
            cut = i;
        }
        out.push_back(rest.substr(0, cut));
        rest = rest.substr(cut + (cut < rest.size() && rest[cut] == ' ' ? 1 : 0));
    }
    out.push_back(rest);
    return out;
}

}  // namespace msmon::tui
