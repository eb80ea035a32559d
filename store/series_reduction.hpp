// Downsampling a per-rank series for a chart that is `columns` pixels wide, in the store: what a reader returns
// instead of every step when the view only has so many columns to draw (ClickHouse does the same in SQL; see
// store/clickhouse/clickhouse_series_sql.cpp).
//
// The contract: drawn over [lo, hi] on exactly `columns` pixel columns (tui/widgets/braille_chart.cpp), the
// reduced series draws the same pixels (the split is core/series/step_columns.hpp), NaN/Inf marks, y range and cursor
// read-out as the full one, linear or log scale. So each column keeps its first, last, lowest and highest finite value
// and the same for positive values (log scale plots only those), its latest value of any kind and its first NaN, +Inf
// and -Inf; outside [lo, hi] the series keeps its first and last point and the finite/positive points next to the
// window (the lines into and out of the plot); and the point the cursor reads (the latest at or before `keep_step`). A
// one-step spike always survives: it is some column's highest value. Drawn on another width, the reduced series
// still holds every column's extremes of its own split, so spikes survive any zoom; only a column's inner span
// can be narrower until the view asks again with its width.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace msmon {

struct StepValue;
struct RankSeries;

struct SeriesWindow {
    std::optional<std::int64_t> lo, hi;  // none: the series' extent (first and last step over every rank)
    int columns = 0;
    std::optional<std::int64_t> keep_step;  // the cursor
};

// Reduces each rank's step-sorted points (one per step) as described above; windows with no columns or hi < lo
// leave the series as they are.
void reduce_series(std::vector<RankSeries>& series, const SeriesWindow& window);

}  // namespace msmon
