// Ranks as ranges (see the header).
#include "core/text/rank_ranges.hpp"

namespace msmon {

std::string rank_ranges(const std::vector<int>& ranks) {
    std::string out;
    for (std::size_t i = 0; i < ranks.size();) {
        std::size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(ranks[i]);
        if (j > i) out += "-" + std::to_string(ranks[j]);
        i = j + 1;
    }
    return out;
}

std::optional<std::vector<int>> parse_rank_ranges(std::string_view text) {
    std::vector<int> out;
    const auto number = [](std::string_view s) -> std::optional<int> {
        if (s.empty() || s.size() > 7) return std::nullopt;
        int n = 0;
        for (char c : s) {
            if (c < '0' || c > '9') return std::nullopt;
            n = n * 10 + (c - '0');
        }
        return n <= kMaxRanksParsed ? std::optional(n) : std::nullopt;
    };
    while (!text.empty()) {
        const auto comma = text.find(',');
        const std::string_view part = text.substr(0, comma);
        const auto dash = part.find('-');
        const auto first = number(part.substr(0, dash));
        const auto last = dash == std::string_view::npos ? first : number(part.substr(dash + 1));
        if (!first || !last || *last < *first || (!out.empty() && *first <= out.back())) return std::nullopt;
        if (out.size() + static_cast<std::size_t>(*last - *first) >= static_cast<std::size_t>(kMaxRanksParsed))
            return std::nullopt;
        for (int r = *first; r <= *last; ++r) out.push_back(r);
        if (comma == std::string_view::npos) break;
        text.remove_prefix(comma + 1);
        if (text.empty()) return std::nullopt;  // a trailing comma
    }
    return out;
}

}  // namespace msmon
