// What every store's module_rows / module_series share: series put together from a tensor's runs, and reduced
// to a window's columns as rank_series is.
#pragma once

#include <vector>

#include "store/reader.hpp"

namespace msmon {

// Adds `run`'s step-sorted points to `into` (step-sorted): where both have a step, `run`'s value wins (read the
// runs oldest first, so a restart's later run wins).
void merge_later_run(std::vector<StepValue>& into, const std::vector<StepValue>& run);

// Each series cut to the window's [lo, hi] (absent bounds: no cut) and, with columns, reduced to what draws the
// same on them (reduce_series).
void reduce_module_series(std::vector<std::vector<StepValue>>& series, const SeriesWindow& window);

}  // namespace msmon
