// Step lists: parsed once into sorted, merged, inclusive ranges.
#include "core/steps_list.hpp"

#include <algorithm>

#include "core/text/number_text.hpp"

namespace msmon {

std::optional<StepList> StepList::parse(std::string_view text, std::string& error) {
    StepList out;
    auto trim = [](std::string_view v) {
        while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
        while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
        return v;
    };
    std::string_view rest = trim(text);
    // Accept msprobe's own spelling too: "[12, 20]".
    if (rest.size() >= 2 && rest.front() == '[' && rest.back() == ']') rest = trim(rest.substr(1, rest.size() - 2));
    if (rest.empty()) {
        error = "empty step list";
        return std::nullopt;
    }
    while (true) {
        const auto comma = rest.find(',');
        const std::string_view item = trim(rest.substr(0, comma));
        const auto dash = item.find('-', 1);
        auto a = parse_int(trim(item.substr(0, dash)));
        auto b = dash == std::string_view::npos ? a : parse_int(trim(item.substr(dash + 1)));
        if (!a || !b || *a < 0 || *b < *a) {
            error = "'" + std::string(item) + "' is not a step or an inclusive range A-B";
            return std::nullopt;
        }
        out.ranges_.emplace_back(*a, *b);
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    std::sort(out.ranges_.begin(), out.ranges_.end());
    std::vector<std::pair<std::int64_t, std::int64_t>> merged;
    for (const auto& r : out.ranges_) {
        // Adjacent or overlapping; written so that a range ending at INT64_MAX cannot overflow.
        if (!merged.empty() && (r.first <= merged.back().second || r.first - merged.back().second == 1))
            merged.back().second = std::max(merged.back().second, r.second);
        else merged.push_back(r);
    }
    out.ranges_ = std::move(merged);
    return out;
}

bool StepList::contains(std::int64_t step) const {
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), step,
                               [](std::int64_t s, const auto& r) { return s < r.first; });
    if (it == ranges_.begin()) return false;
    --it;
    return step <= it->second;
}

}  // namespace msmon
