// The one split of a step window into pixel columns. Every chart and every store that downsamples for one uses it:
// the braille chart (tui/widgets/braille_chart.cpp), downsample_minmax (tui/widgets/downsample.cpp), reduce_series
// (store/series_reduction.cpp) and ClickHouse's SQL (store/clickhouse/clickhouse_series.cpp, which writes the same
// formula in SQL: clickhouse_step_column). tests/e2e/series_rules_test.cpp runs one table through all of them.
//
// Steps [lo, hi] on `columns` columns: column(step) = floor((step - lo) * columns / (hi - lo + 1)), exact for any
// int64 steps (128-bit where 64 bits could overflow); -1 left of lo and `columns` right of hi. Column c holds the
// steps first_step(c)..last_step(c); a column narrower than one step holds none (first_step > last_step).
#pragma once

#include <cstdint>

namespace msmon {

class StepColumns {
public:
    // Requires lo <= hi and columns > 0.
    StepColumns(std::int64_t lo, std::int64_t hi, int columns);

    std::int64_t lo() const { return lo_; }
    std::int64_t hi() const { return hi_; }
    int columns() const { return columns_; }

    std::int64_t column(std::int64_t step) const {
        if (step < lo_) return -1;
        if (step > hi_) return columns_;
        const std::uint64_t offset = static_cast<std::uint64_t>(step) - static_cast<std::uint64_t>(lo_);
        if (narrow_) return static_cast<std::int64_t>(offset * static_cast<std::uint64_t>(columns_) / span64_);
        return wide_column(offset);
    }
    // The first and last step of column c (0 <= c < columns); an empty column past the int64 maximum stays at it.
    std::int64_t first_step(int c) const;
    std::int64_t last_step(int c) const;

private:
    __extension__ typedef __int128 Wide;
    std::int64_t wide_column(std::uint64_t offset) const;
    Wide start_offset(int c) const;  // of column c, from lo: ceil(c * span / columns)

    std::int64_t lo_, hi_;
    int columns_;
    std::uint64_t span64_ = 0;  // hi - lo + 1 when narrow_
    bool narrow_ = false;       // (hi - lo + 1) * columns fits 64 bits: plain division (a frame's hot path)
};

}  // namespace msmon
