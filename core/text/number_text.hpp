// Exact number text: parse doubles and integers the way msprobe writes them, print shortest round-trip text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace msmon {

// Parses a whole field as a double: decimal, exponent, "nan", "inf", "-inf", "-0.0", integer text.
// Returns nullopt unless the entire field is one number (no guessing on partial matches).
std::optional<double> parse_double(std::string_view text);

// Parses a whole field as a signed 64-bit integer.
std::optional<std::int64_t> parse_int(std::string_view text);

// A rank as a user types it: a whole number from 0 to 2147483647 (past 32 bits it once wrapped to another rank).
std::optional<int> parse_rank(std::string_view text);
// What a refused rank is told: "--rank takes a rank, a whole number from 0 to 2147483647: 4294967296 is not one".
std::string rank_refusal(std::string_view option, std::string_view text);

// Shortest text that parses back to the same double; "nan", "inf", "-inf" for non-finite values.
std::string format_double(double value);
// format_double(value) if it fits `width` characters, else the most significant digits that do (a table column:
// 0.014499999999999999 shows as 0.0145, 123456789012345680 as 1.2345679e+17). Exact text is for CSV and JSON.
std::string format_double_within(double value, int width);
// A number in a sentence or a table cell: 4 significant digits ("11.71", "2.5e-05", "nan"). Exact text is for
// CSV, JSON and the stored values.
std::string format_short(double value);
// Two numbers a sentence compares, each with 4 significant digits or as many more as it takes to tell them apart
// ("2.48753 against 2.46291"; "1.000001 against 1"); equal numbers read equal.
std::pair<std::string, std::string> format_apart(double a, double b);

// Appends format_double(value) to out without a temporary allocation.
void append_double(std::string& out, double value);

// Python's repr(float): what pandas writes for a float cell ("0.0", "1e-06", "1.1e-05", "1e+16", "nan").
std::string python_float_repr(double value);

}  // namespace msmon
