// The op -> aggregate rule and its arithmetic.
#include "core/series/op_aggregate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace msmon {

AggregateRule aggregate_rule(std::string_view op) {
    for (const auto& r : kOpRules)
        if (r.op == op) return r.rule;
    return kOtherOpsRule;
}

void combine(AggregateRule rule, StepAggregate& into, const StepAggregate& more) {
    if (more.n > 0) {
        if (into.n == 0) into.acc = more.acc;
        else if (rule == AggregateRule::max) into.acc = std::max(into.acc, more.acc);
        else if (rule == AggregateRule::min) into.acc = std::min(into.acc, more.acc);
        else into.acc += more.acc;
    }
    into.n += more.n;
    into.nans += more.nans;
}

void add_value(AggregateRule rule, StepAggregate& a, double v) {
    if (std::isnan(v)) {
        ++a.nans;
        return;
    }
    StepAggregate one{a.step, rule == AggregateRule::root_sum_of_squares ? v * v : v, 1, 0};
    combine(rule, a, one);
}

double final_value(AggregateRule rule, const StepAggregate& a) {
    if (a.nans > 0 || a.n == 0) return std::numeric_limits<double>::quiet_NaN();
    switch (rule) {
        case AggregateRule::root_sum_of_squares:
            return std::sqrt(a.acc);
        case AggregateRule::max:
        case AggregateRule::min:
        case AggregateRule::total:
            return a.acc;
        case AggregateRule::mean:
            return a.acc / a.n;
    }
    return a.acc;
}

}  // namespace msmon
