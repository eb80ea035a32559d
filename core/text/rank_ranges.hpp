// Ranks as ranges ("0-3,5,7-8"): how a message or a view names a set of ranks of a job of any size.
#pragma once

#include <string>
#include <vector>

namespace msmon {

// `ranks` ascending.
std::string rank_ranges(const std::vector<int>& ranks);

}  // namespace msmon
