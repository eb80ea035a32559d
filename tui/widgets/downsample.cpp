// Min/max-per-column downsampling: one pass over the points, one over the columns.
#include "tui/widgets/downsample.hpp"

#include <algorithm>
#include <cmath>

namespace msmon::tui {

namespace {

// Step offsets times a column count overflow 64 bits for extreme step ranges; 128 bits do not.
__extension__ typedef __int128 Wide;

// First step offset of column c: ceil(c * span / columns). Column c covers offsets whose
// floor(offset * columns / span) == c, so a column narrower than one step covers none (first > last).
std::int64_t column_start(Wide c, Wide span, Wide columns) {
    return static_cast<std::int64_t>((c * span + columns - 1) / columns);
}

}  // namespace

std::vector<ColumnStat> downsample_minmax(const std::vector<SeriesPoint>& points, std::int64_t step_lo,
                                          std::int64_t step_hi, int columns) {
    if (columns <= 0) return {};
    std::vector<ColumnStat> out(static_cast<std::size_t>(columns));
    if (step_hi < step_lo) {
        for (auto& c : out) c.first_step = step_lo, c.last_step = step_hi;
        return out;
    }
    const Wide span = Wide{step_hi} - Wide{step_lo} + 1;
    const Wide n = columns;
    for (int c = 0; c < columns; ++c) {
        auto& col = out[static_cast<std::size_t>(c)];
        col.first_step = static_cast<std::int64_t>(Wide{step_lo} + column_start(c, span, n));
        col.last_step = static_cast<std::int64_t>(Wide{step_lo} + column_start(Wide{c} + 1, span, n) - 1);
    }
    // Points are visited in their given order, so `last` is the latest value even across a restart.
    for (const auto& p : points) {
        if (p.step < step_lo || p.step > step_hi) continue;
        const auto c = static_cast<std::size_t>((Wide{p.step} - Wide{step_lo}) * n / span);
        auto& col = out[c];
        const double v = p.value;
        if (std::isnan(v)) {
            col.has_nan = true;
        } else if (std::isinf(v)) {
            (v > 0 ? col.has_pos_inf : col.has_neg_inf) = true;
        } else {
            if (col.count == 0) {
                col.min = col.max = v;
            } else {
                col.min = std::min(col.min, v);
                col.max = std::max(col.max, v);
            }
            col.last = v;
            ++col.count;
        }
    }
    return out;
}

}  // namespace msmon::tui
