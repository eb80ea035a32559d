// The two tables of core/series' rules (the step -> pixel column split, the op -> aggregate rule) and what reads
// them, shared by tests/e2e/series_rules_test.cpp (SQLite, the chart) and
// tests/cluster/series_rules_clickhouse_test.cpp (ClickHouse's SQL for the same rules): every place that applies a
// rule is checked against one table.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "store/reader.hpp"

namespace msmon::test {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

struct ColumnCase {
    std::int64_t lo, hi;
    int columns;
    std::int64_t step;
    std::int64_t column;  // -1 left of the window, `columns` right of it
};

// floor((step - lo) * columns / (hi - lo + 1)), worked out by hand.
inline const ColumnCase kColumnCases[] = {
    {0, 9, 5, -1, -1},
    {0, 9, 5, 10, 5},
    {0, 9, 5, 0, 0},
    {0, 9, 5, 1, 0},
    {0, 9, 5, 2, 1},
    {0, 9, 5, 9, 4},
    {0, 2, 8, 0, 0},  // a window narrower in steps than in columns: steps land 8/3 columns apart
    {0, 2, 8, 1, 2},
    {0, 2, 8, 2, 5},
    {-500, 16000, 133, 7777, 66},  // 8277 * 133 / 16501 = 66.7
    {-500, 16000, 133, -500, 0},
    {-500, 16000, 133, 16000, 132},
    {1'000'000'000'000, 1'000'000'000'399, 400, 1'000'000'000'123, 123},
    {kMax - 10, kMax, 3, kMax, 2},  // 10 * 3 / 11 = 2.7
    {kMax - 10, kMax, 3, kMax - 7, 0},
    {-kMax, kMax, 400, kMax, 399},  // spans past 64 bits: 128-bit arithmetic
    {-kMax, kMax, 400, 0, 199},     // kMax * 400 / (2 * kMax + 1) = 199.99…
    {-kMax, kMax, 400, -kMax, 0},
};

inline std::string case_name(const ColumnCase& c) {
    return "steps " + std::to_string(c.lo) + ".." + std::to_string(c.hi) + " on " + std::to_string(c.columns) +
           " columns, step " + std::to_string(c.step);
}

struct OpCase {
    const char* op;
    std::vector<double> values;  // one per tensor, all on rank 0 at one step
    double expected;             // NaN: the step reads NaN
};

inline const OpCase kOpCases[] = {
    {"norm", {3, 4, 0}, 5},  // the norm of the tensors together
    {"norm", {-3, 4}, 5},          {"norm", {12}, 12},        {"max", {-1, 2, 0.5}, 2},
    {"max", {-7, -3}, -3},         {"min", {-1, 2, 0.5}, -1}, {"mean", {1, 2, 6}, 3},
    {"mean", {-2, 2}, 0},          {"nans", {1, 0, 2}, 3},  // a count: summed
    {"zeros", {0.5, 0.25}, 0.375},                          // any other op: the mean
    {"norm", {3, kNaN, 4}, kNaN},                           // a NaN shows
    {"max", {kNaN, 1}, kNaN},      {"mean", {kNaN}, kNaN},    {"max", {kInf, 1}, kInf},
    {"min", {-kInf, 1}, -kInf},
};
inline constexpr const char* kOps = "norm,max,min,mean,nans,zeros";
inline constexpr int kOpCount = 6;
inline constexpr std::size_t kTensors = 3;

inline int slot_of(const std::string& op) {
    const std::string ops = kOps;
    int slot = 0;
    for (std::size_t at = 0; at < ops.find(op); ++at) slot += ops[at] == ',';
    return slot;
}

// Case i is step 10 + i.
inline std::int64_t step_of(std::size_t i) {
    return 10 + static_cast<std::int64_t>(i);
}

inline std::string describe(const OpCase& c) {
    std::string s = std::string(c.op) + " of {";
    for (double v : c.values) s += std::to_string(v) + " ";
    return s + "}";
}

inline void expect_value(double got, double expected, const std::string& what) {
    if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(got)) << what << ": " << got;
    } else {
        EXPECT_DOUBLE_EQ(got, expected) << what;
    }
}

// The value at `step` of rank 0's series, or a note saying it is missing.
inline double value_at(const std::vector<RankSeries>& series, std::int64_t step, const std::string& what) {
    for (const auto& rs : series)
        if (rs.rank == 0)
            for (const auto& p : rs.points)
                if (p.step == step) return p.value;
    ADD_FAILURE() << what << ": no value at step " << step;
    return 0;
}

}  // namespace msmon::test
