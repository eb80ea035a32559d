// Min/max-per-column downsampling: one pass over the points, one over the columns.
#include "tui/widgets/downsample.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace msmon::tui {

namespace {

// Step offsets times a column count overflow 64 bits for extreme step ranges; 128 bits do not.
__extension__ typedef __int128 Wide;

// First step offset of column c: ceil(c * span / columns). Column c covers offsets whose
// floor(offset * columns / span) == c, so a column narrower than one step covers none (first > last).
std::int64_t column_start(Wide c, Wide span, Wide columns) {
    return static_cast<std::int64_t>((c * span + columns - 1) / columns);
}

// The points of one column seen in a row, folded into its ColumnStat when the run ends.
struct Accumulator {
    double min = std::numeric_limits<double>::infinity(), max = -min, last = 0;
    int count = 0;
    bool nan = false, pos_inf = false, neg_inf = false;

    void add(double v) {
        if (std::isfinite(v)) {
            min = std::min(min, v), max = std::max(max, v), last = v;
            ++count;
        } else if (std::isnan(v)) {
            nan = true;
        } else {
            (v > 0 ? pos_inf : neg_inf) = true;
        }
    }
    void flush_into(ColumnStat& col) {
        if (count > 0) {
            col.min = col.count ? std::min(col.min, min) : min;
            col.max = col.count ? std::max(col.max, max) : max;
            col.last = last;
            col.count += count;
        }
        col.has_nan = col.has_nan || nan;
        col.has_pos_inf = col.has_pos_inf || pos_inf;
        col.has_neg_inf = col.has_neg_inf || neg_inf;
        *this = Accumulator{};
    }
};

}  // namespace

std::vector<ColumnStat> downsample_minmax(const std::vector<SeriesPoint>& points, std::int64_t step_lo,
                                          std::int64_t step_hi, int columns) {
    std::vector<ColumnStat> out;
    downsample_minmax_into(points, step_lo, step_hi, columns, out);
    return out;
}

void downsample_minmax_into(const std::vector<SeriesPoint>& points, std::int64_t step_lo, std::int64_t step_hi,
                            int columns, std::vector<ColumnStat>& out) {
    out.assign(static_cast<std::size_t>(std::max(columns, 0)), ColumnStat{});
    if (columns <= 0) return;
    if (step_hi < step_lo) {
        for (auto& c : out) c.first_step = step_lo, c.last_step = step_hi;
        return;
    }
    const Wide span = Wide{step_hi} - Wide{step_lo} + 1;
    const Wide n = columns;
    if (span <= Wide{std::numeric_limits<std::int64_t>::max()} / (n + 1)) {
        // (c + 1) * span fits 64 bits: plain division (the 128-bit one dominates a frame otherwise).
        const auto s64 = static_cast<std::int64_t>(span);
        for (int c = 0; c < columns; ++c) {
            auto& col = out[static_cast<std::size_t>(c)];
            col.first_step = step_lo + (c * s64 + columns - 1) / columns;
            col.last_step = step_lo + ((c + 1) * s64 + columns - 1) / columns - 1;
        }
    } else {
        for (int c = 0; c < columns; ++c) {
            auto& col = out[static_cast<std::size_t>(c)];
            col.first_step = static_cast<std::int64_t>(Wide{step_lo} + column_start(c, span, n));
            col.last_step = static_cast<std::int64_t>(Wide{step_lo} + column_start(Wide{c} + 1, span, n) - 1);
        }
    }
    // Points are visited in their given order, so `last` is the latest value even across a restart. Sorted
    // points mostly stay in the column of the previous one: they are summed up in registers, and a column
    // index is only computed (a division) when a point leaves the current column's bounds.
    const bool narrow =
        span <= Wide{std::numeric_limits<std::int64_t>::max()} / n;  // offset * n fits 64 bits
    std::size_t c = 0;
    std::int64_t cur_first = out[0].first_step, cur_last = out[0].last_step;
    Accumulator acc;
    for (const auto& p : points) {
        if (p.step < step_lo || p.step > step_hi) continue;
        if (p.step < cur_first || p.step > cur_last) {
            acc.flush_into(out[c]);
            const auto offset = static_cast<std::uint64_t>(p.step) - static_cast<std::uint64_t>(step_lo);
            c = narrow ? static_cast<std::size_t>(offset * static_cast<std::uint64_t>(columns) /
                                                  static_cast<std::uint64_t>(span))
                       : static_cast<std::size_t>(Wide{offset} * n / span);
            cur_first = out[c].first_step, cur_last = out[c].last_step;
        }
        acc.add(p.value);
    }
    acc.flush_into(out[c]);
}

}  // namespace msmon::tui
