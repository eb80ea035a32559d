#include "tui/widgets/status_fields.hpp"

#include <algorithm>
#include <numeric>

#include "tui/glyph_stand_ins.hpp"
#include "tui/screen_buffer.hpp"

namespace msmon::tui {

namespace {

constexpr int kLeastCut = 12;  // a cut field narrower than this says too little to be worth its columns
constexpr int kCutRanks = 3;   // fields ranked after this (where the run is: ranks, steps, rate) are whole or out

// `text`'s longest front (whole UTF-8 characters) that fits `width` columns with the cut mark after it.
std::string cut_right(const std::string& text, int width, bool unicode) {
    const std::string mark = glyph_text(kCutMark, unicode);
    std::size_t end = 0;
    for (std::size_t next = 0; next < text.size();) {
        ++next;
        while (next < text.size() && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80) ++next;
        if (display_width(std::string_view(text).substr(0, next)) + display_width(mark) > width) break;
        end = next;
    }
    return text.substr(0, end) + mark;
}

}  // namespace

std::string fit_status_fields(const std::vector<StatusField>& fields, int width, bool unicode) {
    std::vector<std::size_t> by_rank;
    for (std::size_t i = 0; i < fields.size(); ++i)
        if (!fields[i].text.empty()) by_rank.push_back(i);
    std::stable_sort(by_rank.begin(), by_rank.end(),
                     [&](std::size_t a, std::size_t b) { return fields[a].rank < fields[b].rank; });
    std::vector<std::string> shown(fields.size());  // by position; empty: left out
    const auto joined = [&] {
        std::string line;
        for (const auto& s : shown)
            if (!s.empty()) line += (line.empty() ? " " : " | ") + s;
        return line;
    };
    const auto fits_with = [&](std::size_t i, const std::string& text) {
        shown[i] = text;
        const bool fits = display_width(joined()) <= width;
        if (!fits) shown[i].clear();
        return fits;
    };
    const auto room = [&] {
        const std::string line = joined();
        return width - display_width(line) - (line.empty() ? 1 : 3);
    };
    for (std::size_t i : by_rank)
        if (!fits_with(i, fields[i].text) && fields[i].rank <= kCutRanks && room() >= kLeastCut)
            fits_with(i, cut_right(fields[i].text, room(), unicode));
    if (joined().empty() && !by_rank.empty())
        shown[by_rank.front()] = cut_right(fields[by_rank.front()].text, std::max(1, width - 1), unicode);
    return joined();
}

}  // namespace msmon::tui
