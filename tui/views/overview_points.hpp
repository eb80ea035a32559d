// What the Overview's list and heatmap share: values as short text, and the points of a window.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/reader.hpp"
#include "tui/widgets/downsample.hpp"

namespace msmon::tui {

// A value in at most 10 columns: 5 significant digits, nan, inf, -inf.
std::string short_number(double v);

// The points at or after `first` (points are step-sorted), into `out`: the overview draws only the steps that fit.
const std::vector<SeriesPoint>& tail_points(const std::vector<StepValue>& in, std::int64_t first,
                                            std::vector<SeriesPoint>& out);

}  // namespace msmon::tui
