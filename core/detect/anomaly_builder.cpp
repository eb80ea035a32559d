// Builds a detection's AnomalyRecord (see the header).
#include "core/detect/anomaly_builder.hpp"

#include <utility>

#include "core/detect/anomaly_score.hpp"

namespace msmon {

AnomalyRecord detected_anomaly(Rule rule, AnomalyAt at, std::string message) {
    AnomalyRecord a;
    a.source = "detected";
    a.rule = std::string(rule_name(rule));
    a.rank = at.rank;
    a.step = at.step;
    a.micro_step = at.micro_step;
    a.kind = std::move(at.kind);
    a.vpp_stage = std::move(at.vpp_stage);
    a.name = std::move(at.name);
    a.op = std::move(at.op);
    a.value = at.value;
    a.reference = at.reference;
    a.call_id = at.call_id;
    a.pp_stage = at.pp_stage;
    a.vpp = at.vpp;
    a.group_mates = std::move(at.group_mates);
    a.tag_name = !at.tag_name.empty() ? std::move(at.tag_name)
                 : a.kind.empty()     ? "rank" + std::to_string(a.rank)
                                      : a.kind + "/rank" + std::to_string(a.rank);
    a.message = std::move(message);
    a.score = anomaly_score(a);
    return a;
}

}  // namespace msmon
