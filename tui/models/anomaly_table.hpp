// The anomalies table as data: filter, group repeats of one tensor, sort by any column or in msprobe's
// "first anomaly" order. Pure functions over the list a Reader returned; the view only draws the result.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/detect/anomaly_record.hpp"
#include "core/steps_list.hpp"

namespace msmon::tui {

enum class AnomalySort { score, first, step, rank, rule, kind, name, value, source };

struct AnomalyTableFilter {
    std::optional<std::string> rule, kind, source;
    std::optional<int> rank;
    std::optional<StepList> steps;
    std::optional<std::string> name_regex;
};

struct AnomalyRow {
    std::size_t first = 0;  // index (into the list) of the row's representative: its highest-scored member
    int count = 1;          // anomalies grouped into this row
    std::int64_t first_step = 0, last_step = 0;
    double rank_score = 0;  // score plus breadth (how many fired at the same rank and step)
};

struct AnomalyTableOptions {
    AnomalyTableFilter filter;
    AnomalySort sort = AnomalySort::score;
    bool descending = false;  // for score the natural order is already highest first
    bool group = true;        // one row per (source, rule, rank, kind, name, op)
};

std::vector<AnomalyRow> build_anomaly_rows(const std::vector<AnomalyRecord>& list, const AnomalyTableOptions& options);

const char* anomaly_sort_name(AnomalySort s);

}  // namespace msmon::tui
