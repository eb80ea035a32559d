// Number text exactly as Python and numpy print it, for the simulated MindFormers logs.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <vector>

namespace msmon {

// std::to_chars of a float32: shortest round-trip digits, or `precision` digits when given.
std::string f32_text(float v, std::chars_format fmt, int precision = -1);

// "nan", "inf" or "-inf", as Python and numpy print a non-finite value.
std::string non_finite_text(double v);

// str(np.float32(v)): shortest digits, positional in [1e-4, 1e16) with at least one decimal, else scientific.
std::string np_scalar(float v);

// One float32 element as np.array2string prints it (precision 8, floatmode maxprec): "47.329006", "1.",
// "1.e-05".
std::string np_element(float v);

// A one-element float32 array: "[47.329006]".
std::string np_array1(float v);

// A float32 vector as numpy prints a wide-ranged array: scientific, equal digits, wrapped at 75 columns.
std::string np_array_scientific(const std::vector<float>& values);

// Python's "%*.*f" (and f"{v:5.6f}"): nan and inf as words, right-aligned to the width.
std::string py_fixed(double v, int width, int precision);

// str(datetime.timedelta(seconds=n)): "6:19:18", "1 day, 3:35:10", "25 days, 2:07:41".
std::string timedelta_text(std::int64_t seconds);

// Python's `fmt % v` for one float and a printf-style format such as "%.3f" or "%4.1f".
std::string printf_text(const char* fmt, double v);

}  // namespace msmon
