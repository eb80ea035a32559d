// Ranks as ranges ("0-3,5,7-8"): how a message or a view names a set of ranks of a job of any size.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace msmon {

// `ranks` ascending.
std::string rank_ranges(const std::vector<int>& ranks);
// The ranks `text` names (rank_ranges' form), ascending; nullopt if it is not that form (a range of more than
// kMaxRanksParsed ranks included).
inline constexpr int kMaxRanksParsed = 1 << 20;
std::optional<std::vector<int>> parse_rank_ranges(std::string_view text);

}  // namespace msmon
