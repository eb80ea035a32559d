// One pass per rank: the kept points of each column are tracked as indexes, then copied out in step order.
#include "store/series_reduction.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/series/step_columns.hpp"
#include "store/reader.hpp"

namespace msmon {

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

// Indexes of the points one column (or one side outside the window) keeps.
struct Kept {
    std::size_t first_fin = kNone, last_fin = kNone, min_fin = kNone, max_fin = kNone;
    std::size_t first_pos = kNone, last_pos = kNone, min_pos = kNone, max_pos = kNone;
    std::size_t last_any = kNone, first_nan = kNone, first_pinf = kNone, first_ninf = kNone;

    void add(const std::vector<StepValue>& pts, std::size_t i) {
        const double v = pts[i].value;
        last_any = i;
        if (std::isnan(v)) {
            if (first_nan == kNone) first_nan = i;
            return;
        }
        if (std::isinf(v)) {
            std::size_t& first = v > 0 ? first_pinf : first_ninf;
            if (first == kNone) first = i;
            return;
        }
        if (first_fin == kNone) first_fin = i;
        last_fin = i;
        if (min_fin == kNone || v < pts[min_fin].value) min_fin = i;
        if (max_fin == kNone || v > pts[max_fin].value) max_fin = i;
        if (v <= 0) return;
        if (first_pos == kNone) first_pos = i;
        last_pos = i;
        if (min_pos == kNone || v < pts[min_pos].value) min_pos = i;
        if (max_pos == kNone || v > pts[max_pos].value) max_pos = i;
    }
    template <class F>
    void each(F&& f) const {
        for (std::size_t i : {first_fin, last_fin, min_fin, max_fin, first_pos, last_pos, min_pos, max_pos, last_any,
                              first_nan, first_pinf, first_ninf})
            if (i != kNone) f(i);
    }
};

void reduce_one(std::vector<StepValue>& pts, const StepColumns& split, std::optional<std::int64_t> keep_step) {
    if (pts.empty()) return;
    std::vector<char> keep(pts.size(), 0);
    keep.front() = keep.back() = 1;
    const int columns = split.columns();
    std::vector<Kept> cols(static_cast<std::size_t>(columns));
    Kept before, after_window;  // before: last finite/positive; after: first finite/positive
    std::size_t at_cursor = kNone;
    for (std::size_t i = 0; i < pts.size(); ++i) {
        const std::int64_t step = pts[i].step;
        if (keep_step && step <= *keep_step) at_cursor = i;
        const std::int64_t c = split.column(step);
        if (c < 0) {
            before.add(pts, i);
        } else if (c >= columns) {
            if (after_window.first_fin == kNone || after_window.first_pos == kNone) after_window.add(pts, i);
        } else {
            cols[static_cast<std::size_t>(c)].add(pts, i);
        }
    }
    const auto mark = [&](std::size_t i) { keep[i] = 1; };
    for (const auto& k : cols) k.each(mark);
    for (std::size_t i : {before.last_fin, before.last_pos, after_window.first_fin, after_window.first_pos, at_cursor})
        if (i != kNone) keep[i] = 1;
    std::size_t out = 0;
    for (std::size_t i = 0; i < pts.size(); ++i)
        if (keep[i]) pts[out++] = pts[i];
    pts.resize(out);
}

}  // namespace

void reduce_series(std::vector<RankSeries>& series, const SeriesWindow& window) {
    if (window.columns <= 0) return;
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
    for (const auto& rs : series)
        if (!rs.points.empty()) lo = std::min(lo, rs.points.front().step), hi = std::max(hi, rs.points.back().step);
    if (window.lo) lo = *window.lo;
    if (window.hi) hi = *window.hi;
    if (hi < lo) return;
    const StepColumns split(lo, hi, window.columns);
    for (auto& rs : series) reduce_one(rs.points, split, window.keep_step);
}

}  // namespace msmon
