// Exact number text: parse doubles and integers the way msprobe writes them, print shortest round-trip text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace msmon {

// Parses a whole field as a double: decimal, exponent, "nan", "inf", "-inf", "-0.0", integer text.
// Returns nullopt unless the entire field is one number (no guessing on partial matches).
std::optional<double> parse_double(std::string_view text);

// Parses a whole field as a signed 64-bit integer.
std::optional<std::int64_t> parse_int(std::string_view text);

// Shortest text that parses back to the same double; "nan", "inf", "-inf" for non-finite values.
std::string format_double(double value);
// Appends format_double(value) to out without a temporary allocation.
void append_double(std::string& out, double value);

// Python's repr(float): what pandas writes for a float cell ("0.0", "1e-06", "1.1e-05", "1e+16", "nan").
std::string python_float_repr(double value);

}  // namespace msmon
