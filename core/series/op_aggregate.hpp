// The one rule for combining a step's values of one op across tensors into the one value per (rank, step) that the
// Overview and the Chart show for "every parameter" or a name filter. Every store answers by it: rank_block
// (store/rank_step_blocks.cpp, kept by the writer), a name filter over the samples (store/sqlite_reader.cpp), and
// ClickHouse (store/clickhouse/clickhouse_series.cpp, which writes each rule's final value in SQL).
// tests/e2e/series_rules_test.cpp runs one table through all of them.
//
//   norm          the norm of all the tensors together: sqrt of the sum of the squared norms
//   max, min      the largest, the smallest
//   nans          the count over all the tensors: the sum
//   anything else (mean, zeros, ...) the mean
// A NaN among the values makes the step's value NaN (it is what must show); no value at all is NaN too.
#pragma once

#include <cstdint>
#include <string_view>

namespace msmon {

enum class AggregateRule { root_sum_of_squares, max, min, total, mean };

// The ops with a rule of their own; every other op is a mean. (ClickHouse's SQL switches over this table too.)
struct OpRule {
    std::string_view op;
    AggregateRule rule;
};
inline constexpr OpRule kOpRules[] = {{"norm", AggregateRule::root_sum_of_squares},
                                      {"max", AggregateRule::max},
                                      {"min", AggregateRule::min},
                                      {"nans", AggregateRule::total}};
inline constexpr AggregateRule kOtherOpsRule = AggregateRule::mean;

AggregateRule aggregate_rule(std::string_view op);

// An aggregate under construction: `acc` is the sum of squares, max, min or sum as the rule says; NaNs are counted
// apart. 24 bytes on disk (store/rank_step_blocks.cpp).
struct StepAggregate {
    std::int64_t step = 0;
    double acc = 0;
    std::int32_t n = 0;
    std::int32_t nans = 0;
};

// One value into an aggregate.
void add_value(AggregateRule rule, StepAggregate& a, double v);
// Two aggregates of the same rule into one.
void combine(AggregateRule rule, StepAggregate& into, const StepAggregate& more);
// The value shown.
double final_value(AggregateRule rule, const StepAggregate& a);
inline double aggregate_value(std::string_view op, const StepAggregate& a) {
    return final_value(aggregate_rule(op), a);
}

}  // namespace msmon
