// The one way msmon's detectors make an anomaly: a rule, where it was found, and its message. The builder names
// the rule as its descriptor does, fills msprobe's tag when the finding has none, and scores it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/detect/rules.hpp"
#include "core/model/anomaly_record.hpp"

namespace msmon {

// Where a finding is and what it measured (the fields of AnomalyRecord a detector knows).
struct AnomalyAt {
    int rank = 0;
    std::int64_t step = 0;
    std::optional<std::int64_t> micro_step;
    std::string kind;
    std::string vpp_stage;
    std::string name;
    std::string op;
    double value = 0;
    std::optional<double> reference;
    std::int64_t call_id = -1;  // the tensor's forward order on its rank
    std::int64_t pp_stage = 0;
    std::int64_t vpp = 0;
    std::vector<int> group_mates;
    std::string tag_name;  // empty: "<kind>/rank<r>", or "rank<r>" without a kind
};

AnomalyRecord detected_anomaly(Rule rule, AnomalyAt at, std::string message);

}  // namespace msmon
