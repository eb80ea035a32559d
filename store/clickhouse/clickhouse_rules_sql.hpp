// core/series' rules written in ClickHouse SQL: the step -> pixel column split (step_columns.hpp) and the op ->
// aggregate rule (op_aggregate.hpp). Generated from them, so the SQL cannot drift from what SQLite and the
// widgets compute; tests/e2e/series_rules_test.cpp evaluates each on a real server.
#pragma once

#include <cstdint>
#include <string>

namespace msmon {

// Whether ClickHouse can split steps [lo, hi] (lo <= hi) on `columns` columns: (hi - lo + 1) * columns fits Int64.
// Where it does not, the caller reduces in C++ (StepColumns is exact over any int64 range).
bool clickhouse_can_split(std::int64_t lo, std::int64_t hi, int columns);

// The pixel column of the column `step` for steps [lo, hi] on `columns` columns: -1 left, `columns` right.
// Requires clickhouse_can_split(lo, hi, columns).
std::string clickhouse_step_column_sql(std::int64_t lo, std::int64_t hi, int columns);

// A step's accumulator from the column `value` of the rows grouped, by the column `op`: the sum of squares, max,
// min or sum of the non-NaN values (what rank_steps.acc holds).
std::string clickhouse_acc_by_op_sql();

// The value shown for `op` from the columns sq, mx, mn, total (the accumulators), n and nans (the counts).
std::string clickhouse_value_sql(const std::string& op);

}  // namespace msmon
