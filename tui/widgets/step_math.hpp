// Arithmetic on step numbers that saturates instead of overflowing: a file may carry any int64 step (±2^63), and
// the chart's zoom, pan, cursor and window sums must not wrap (signed overflow is undefined behaviour).
#pragma once

#include <cstdint>
#include <limits>

namespace msmon::tui {

inline std::int64_t sat_add(std::int64_t a, std::int64_t b) {
    std::int64_t r;
    if (!__builtin_add_overflow(a, b, &r)) return r;
    return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}

inline std::int64_t sat_sub(std::int64_t a, std::int64_t b) {
    std::int64_t r;
    if (!__builtin_sub_overflow(a, b, &r)) return r;
    return b < 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}

// A double (a zoomed window's edge) as a step, clamped to the int64 range (the plain cast is undefined beyond it).
inline std::int64_t step_from_double(double x) {
    if (!(x > -9.2233720368547758e18)) return std::numeric_limits<std::int64_t>::min();
    if (x >= 9.2233720368547758e18) return std::numeric_limits<std::int64_t>::max();
    return static_cast<std::int64_t>(x);
}

}  // namespace msmon::tui
