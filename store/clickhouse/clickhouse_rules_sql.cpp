// SQL text from core/series' rules.
#include "store/clickhouse/clickhouse_rules_sql.hpp"

#include <limits>

#include "core/series/op_aggregate.hpp"

namespace msmon {

namespace {

std::string acc_sql(AggregateRule rule) {
    switch (rule) {
        case AggregateRule::root_sum_of_squares:
            return "sumIf(value * value, NOT isNaN(value))";
        case AggregateRule::max:
            return "maxIf(value, NOT isNaN(value))";
        case AggregateRule::min:
            return "minIf(value, NOT isNaN(value))";
        case AggregateRule::total:
        case AggregateRule::mean:
            return "sumIf(value, NOT isNaN(value))";
    }
    return "nan";
}

std::string value_sql(AggregateRule rule) {
    switch (rule) {
        case AggregateRule::root_sum_of_squares:
            return "sqrt(sq)";
        case AggregateRule::max:
            return "mx";
        case AggregateRule::min:
            return "mn";
        case AggregateRule::total:
            return "total";
        case AggregateRule::mean:
            return "total / n";
    }
    return "nan";
}

}  // namespace

bool clickhouse_can_split(std::int64_t lo, std::int64_t hi, int columns) {
    // hi - lo in unsigned arithmetic: exact for lo <= hi, where the signed difference can overflow.
    const std::uint64_t below_span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    return below_span < kMax / (static_cast<std::uint64_t>(columns) + 1);
}

std::string clickhouse_step_column_sql(std::int64_t lo, std::int64_t hi, int columns) {
    const std::string L = std::to_string(lo), H = std::to_string(hi), C = std::to_string(columns);
    return "if(step < " + L + ", -1, if(step > " + H + ", " + C + ", intDiv((step - " + L + ") * " + C + ", " +
           std::to_string(hi - lo + 1) + ")))";
}

std::string clickhouse_acc_by_op_sql() {
    std::string sql = "multiIf(";
    for (const auto& r : kOpRules) sql += "op = '" + std::string(r.op) + "', " + acc_sql(r.rule) + ", ";
    return sql + acc_sql(kOtherOpsRule) + ")";
}

std::string clickhouse_value_sql(const std::string& op) {
    return "if(nans > 0 OR n = 0, nan, " + value_sql(aggregate_rule(op)) + ")";
}

}  // namespace msmon
