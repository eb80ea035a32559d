// A series divided by the same series of a baseline run, aligned by step: what the Chart's ratio view draws, and
// where the two parted. A drift shows as the ratio leaving [1/1.5, 1.5] and staying out: the first of 3 steps in a
// row beyond it is where it is flagged (one noisy step is not a drift).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/reader.hpp"

namespace msmon::tui {

inline constexpr double kDivergenceFactor = 1.5;
inline constexpr int kDivergenceSteps = 3;

struct BaselineRatio {
    std::vector<StepValue> points;            // steps both have, finite, the baseline non-zero: value / baseline
    std::optional<std::int64_t> parted_from;  // the first of kDivergenceSteps steps in a row beyond the factor
    double farthest = 1;                      // the ratio farthest from 1 (either way)
    std::int64_t farthest_step = 0;
    std::size_t unmatched = 0;  // steps of the series the baseline does not have (a longer run) or cannot divide
    std::string summary;        // "ratio to baseline: beyond x1.5 from step 63, farthest x2.01 at step 99"
};

// Both step-sorted.
BaselineRatio ratio_to_baseline(const std::vector<StepValue>& current, const std::vector<StepValue>& baseline);

}  // namespace msmon::tui
