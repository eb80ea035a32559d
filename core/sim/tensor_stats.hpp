// A simulated tensor's statistics as msprobe prints them (min, max, norm, mean, nans, zeros), worked out from a
// few of its elements scaled to its real size, and whether two of them print the same text.
#pragma once

#include <vector>

namespace msmon {

// One row's statistics, before rounding.
struct StatRow {
    double min = 0, max = 0, norm = 0, mean = 0, nans = 0, zeros = 0;
};

// A tensor of exact zeros, as msprobe prints it.
inline constexpr StatRow kZeroRow{0, 0, 0, 0, 0, 1};

// A tensor with `count` NaNs: every statistic but the count is NaN.
StatRow nan_row(double count);

// The expected largest of n standard normals: how far a tensor's extremes sit from its mean, in rms.
double expected_max(double n);

// Statistics of a tensor of `numel` elements from `k` of them; `nonneg` for exp_avg_sq.
StatRow vector_stats(const double* x, int k, double numel, bool nonneg);

// Two rows print the same text at msprobe's `ndigits` (values rounded as pandas rounds them).
bool prints_same(const StatRow& a, const StatRow& b, int ndigits);

}  // namespace msmon
