// Min/max-per-column downsampling: one pass over the points, one over the columns.
#include "tui/widgets/downsample.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/series/step_columns.hpp"

namespace msmon::tui {

namespace {

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
    const StepColumns split(step_lo, step_hi, columns);
    for (int c = 0; c < columns; ++c) {
        auto& col = out[static_cast<std::size_t>(c)];
        col.first_step = split.first_step(c);
        col.last_step = split.last_step(c);
    }
    // Points are visited in their given order, so `last` is the latest value even across a restart. Sorted
    // points mostly stay in the column of the previous one: they are summed up in registers, and a column
    // index is only computed (a division) when a point leaves the current column's bounds.
    std::size_t c = 0;
    std::int64_t cur_first = out[0].first_step, cur_last = out[0].last_step;
    Accumulator acc;
    for (const auto& p : points) {
        if (p.step < step_lo || p.step > step_hi) continue;
        if (p.step < cur_first || p.step > cur_last) {
            acc.flush_into(out[c]);
            c = static_cast<std::size_t>(split.column(p.step));
            cur_first = out[c].first_step, cur_last = out[c].last_step;
        }
        acc.add(p.value);
    }
    acc.flush_into(out[c]);
}

}  // namespace msmon::tui
