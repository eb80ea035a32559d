// The anomalies table as data: incidents with their members, or every anomaly — filtered, repeats of one tensor
// grouped, sorted by any column or in msprobe's "first anomaly" order. Pure functions over the list a Reader
// returned; the view only draws the result.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/detect/incidents.hpp"
#include "core/model/anomaly_record.hpp"
#include "core/steps_list.hpp"
#include "core/text/name_pattern.hpp"

namespace msmon::tui {

enum class AnomalySort { score, first, step, rank, rule, kind, name, value, source };

struct AnomalyTableFilter {
    std::optional<std::string> rule, kind, source;
    std::optional<int> rank;
    std::optional<StepList> steps;
    std::optional<std::string> name_regex;
};

// The filter as a test of one anomaly, its name regex compiled once.
class AnomalyFilterTest {
public:
    explicit AnomalyFilterTest(const AnomalyTableFilter& filter);
    bool operator()(const AnomalyRecord& a) const;

private:
    const AnomalyTableFilter& filter_;
    std::optional<NamePattern> name_;
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

// A row of the incidents list: an incident (showing its origin), or, under an expanded one, one of its anomalies.
struct IncidentRow {
    std::size_t incident = 0;  // index into the incidents
    std::size_t record = 0;    // index into the anomalies: the origin on an incident's row, else the member
    bool member = false;
    bool expanded = false;  // an incident's row whose members follow
};

// One row per incident with a member that passes the filter, in the incidents' order (most severe first); under
// each incident `expanded(i)` holds for, its members that pass, the origin first, then in training order.
std::vector<IncidentRow> build_incident_rows(const std::vector<AnomalyRecord>& list,
                                             const std::vector<Incident>& incidents, const AnomalyTableFilter& filter,
                                             const std::function<bool(std::size_t)>& expanded);

}  // namespace msmon::tui
