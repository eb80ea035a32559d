// Spike-preserving downsampling: each screen column keeps the min and max of the points it covers, and
// whether any of them was NaN or ±Inf, so a one-step spike is visible at every zoom.
#pragma once

#include <cstdint>
#include <vector>

namespace msmon::tui {

struct SeriesPoint {
    std::int64_t step = 0;
    double value = 0;
};

struct ColumnStat {
    std::int64_t first_step = 0, last_step = 0;  // steps this column covers (inclusive)
    int count = 0;                               // finite points
    double min = 0, max = 0, last = 0;           // over finite points; `last` = the latest finite value
    bool has_nan = false, has_pos_inf = false, has_neg_inf = false;
    bool marked = false;  // set by callers (e.g. an anomaly at one of these steps)
};

// Splits [step_lo, step_hi] into `columns` equal step ranges and summarises the (step-sorted) points in each.
// Columns with no point have count 0 and no flags.
std::vector<ColumnStat> downsample_minmax(const std::vector<SeriesPoint>& points, std::int64_t step_lo,
                                          std::int64_t step_hi, int columns);
// The same into `out`, reusing its storage (a frame of a thousand rows allocates nothing).
void downsample_minmax_into(const std::vector<SeriesPoint>& points, std::int64_t step_lo, std::int64_t step_hi,
                            int columns, std::vector<ColumnStat>& out);

}  // namespace msmon::tui
