// Tensor names cut to a column's width, keeping the parts that tell tensors apart.
#include "tui/widgets/tensor_name.hpp"

#include <algorithm>
#include <vector>

#include "tui/glyph_stand_ins.hpp"

namespace msmon::tui {

namespace {

bool numbered(const std::string& part) {
    return !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Columns: every byte that does not continue a UTF-8 sequence.
int columns(const std::string& s) {
    return static_cast<int>(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// The first or last `n` columns of a UTF-8 string, never half a character.
std::string first_columns(const std::string& s, int n) {
    std::size_t i = 0;
    for (int c = 0; i < s.size(); ++i)
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && c++ == n) break;
    return s.substr(0, i);
}

std::string last_columns(const std::string& s, int n) {
    std::size_t i = s.size();
    for (int c = 0; i > 0 && c < n;)
        if ((static_cast<unsigned char>(s[--i]) & 0xC0) != 0x80) ++c;
    return s.substr(i);
}

struct Part {
    std::string text;
    bool kept = true;
    std::size_t cut = 0;  // leading characters dropped
};

std::string render(const std::vector<Part>& parts, const std::string& ellipsis) {
    std::string out;
    bool after_dropped = false;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const Part& p = parts[i];
        if (i > 0 && !after_dropped) out += '.';
        if (!p.kept) {
            if (!after_dropped) out += ellipsis;  // one "…" for a run: the parts and the dot after them
            after_dropped = true;
            continue;
        }
        if (p.cut > 0 && !after_dropped) out += ellipsis;
        out += p.text.substr(p.cut);
        after_dropped = false;
    }
    return out;
}

}  // namespace

std::string fit_tensor_name(const std::string& name, int width, bool unicode) {
    if (width <= 0) return "";
    if (columns(name) <= width) return name;
    const std::string ellipsis = glyph_text(kCutMark, unicode);
    std::vector<Part> parts;
    for (std::size_t start = 0;;) {
        const auto dot = name.find('.', start);
        parts.push_back({name.substr(start, dot == std::string::npos ? std::string::npos : dot - start)});
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    const std::size_t n = parts.size();
    auto essential = [&](std::size_t i) {
        return i + 1 == n || numbered(parts[i].text) || (i + 1 < n && numbered(parts[i + 1].text));
    };
    std::string out = render(parts, ellipsis);
    auto fits = [&] { return columns(out = render(parts, ellipsis)) <= width; };
    if (n >= 2) {
        // The wrappers in front, then what lies between numbered parts; the module before the last part
        // stays.
        for (std::size_t i = 0; i + 2 < n && !fits(); ++i)
            if (!essential(i)) parts[i].kept = false;
        Part& module = parts[n - 2];
        if (!fits() && !essential(n - 2) && module.kept) {
            const int over = columns(out) - width + (module.cut == 0 && (n < 3 || parts[n - 3].kept) ? 1 : 0);
            module.cut = static_cast<std::size_t>(
                std::clamp<int>(over, 0, std::max(0, static_cast<int>(module.text.size()) - 2)));
            fits();
        }
    }
    if (columns(out) <= width) return out;
    // Still too wide: the middle goes, the front (the layer) and the end (the module, whole again) stay. A
    // number is never cut ("layers.12" is not shown as "layers.1"), and an ellipsis next to the cut's is not
    // drawn twice.
    if (width <= 1) return ellipsis;
    if (n >= 2) parts[n - 2].cut = 0;
    out = render(parts, ellipsis);
    auto digit = [&](std::size_t i) { return out[i] >= '0' && out[i] <= '9'; };
    std::size_t head_end = first_columns(out, (width - 1) / 2).size();
    while (head_end > 0 && head_end < out.size() && digit(head_end - 1) && digit(head_end)) ++head_end;
    std::string front = out.substr(0, head_end);
    if (front.size() >= ellipsis.size() &&
        front.compare(front.size() - ellipsis.size(), ellipsis.size(), ellipsis) == 0)
        front.resize(front.size() - ellipsis.size());
    if (columns(front) + 1 > width) return first_columns(out, width - 1) + ellipsis;
    std::string cut = front + ellipsis;
    for (int tail = 1; tail < columns(out); ++tail) {
        std::size_t start = out.size() - last_columns(out, tail).size();
        while (start > 0 && start < out.size() && digit(start - 1) && digit(start)) ++start;
        std::string back = out.substr(start);
        if (back.compare(0, ellipsis.size(), ellipsis) == 0) back.erase(0, ellipsis.size());
        std::string candidate = front + ellipsis + back;
        if (columns(candidate) > width) break;
        cut = std::move(candidate);
    }
    return cut;
}

}  // namespace msmon::tui
