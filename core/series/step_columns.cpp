// 128-bit arithmetic where the span times the columns does not fit 64 bits (steps near ±2^63).
#include "core/series/step_columns.hpp"

#include <algorithm>
#include <limits>

namespace msmon {

namespace {

__extension__ typedef __int128 Wide;

Wide span_of(std::int64_t lo, std::int64_t hi) {
    return Wide{hi} - Wide{lo} + 1;
}

// First step offset of column c: ceil(c * span / columns), the smallest offset with floor(offset * columns / span)
// == c.
Wide column_start(Wide c, Wide span, Wide columns) {
    return (c * span + columns - 1) / columns;
}

}  // namespace

StepColumns::StepColumns(std::int64_t lo, std::int64_t hi, int columns) : lo_(lo), hi_(hi), columns_(columns) {
    const Wide span = span_of(lo, hi);
    // (c + 1) * span + columns fits 64 bits for every c < columns: first/last steps and columns by plain division.
    narrow_ = span <= (Wide{std::numeric_limits<std::uint64_t>::max()} - columns) / (Wide{columns} + 1);
    if (narrow_) span64_ = static_cast<std::uint64_t>(span);
}

std::int64_t StepColumns::wide_column(std::uint64_t offset) const {
    return static_cast<std::int64_t>(Wide{offset} * columns_ / span_of(lo_, hi_));
}

StepColumns::Wide StepColumns::start_offset(int c) const {
    if (narrow_) {
        const auto n = static_cast<std::uint64_t>(columns_);
        return Wide{(static_cast<std::uint64_t>(c) * span64_ + n - 1) / n};
    }
    return column_start(c, span_of(lo_, hi_), columns_);
}

std::int64_t StepColumns::first_step(int c) const {
    constexpr Wide kMax = std::numeric_limits<std::int64_t>::max();
    return static_cast<std::int64_t>(std::min(kMax, Wide{lo_} + start_offset(c)));
}

std::int64_t StepColumns::last_step(int c) const {
    constexpr Wide kMax = std::numeric_limits<std::int64_t>::max();
    return static_cast<std::int64_t>(std::min(kMax, Wide{lo_} + start_offset(c + 1) - 1));
}

}  // namespace msmon
