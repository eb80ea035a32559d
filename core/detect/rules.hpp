// The rules anomalies are found by, one descriptor each: msprobe's two (from its dumps, or run by msmon from the
// job's config), msmon's detectors over one series, its checks across ranks, the stall watch and MindFormers'
// thresholds. Every place that treats one rule unlike another reads its descriptor here: the score, how its
// findings join incidents, its colour in the anomalies table, whether the job-level judge owns it, and its
// line in the docs. An anomaly carries its rule by name (the stores keep the name); rule_of() maps it back.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/model/anomaly_record.hpp"

namespace msmon {

enum class Rule : std::uint8_t {
    AnomalyTurbulence,
    AnomalyNan,
    NonFinite,
    Jump,
    Drift,
    DeadLayer,
    ContinuityBreak,
    CrossRankOutlier,
    ReplicaDivergence,
    ReplicaTie,
    OptimizerStep,
    StalledRank,
    GlobalNormSpike,
    EmbeddingNormHigh,
    unknown,  // a dump entry whose message names no rule msmon knows
};

// How a rule's findings join incidents (core/detect/incidents.hpp).
enum class RuleJoin : std::uint8_t {
    own_step,    // each stands at its step: msprobe's rules fire on near-zero means every few steps
    chains,      // into the incident of the step before: an event spreads into the next step
    drift_span,  // one incident while each finding comes within kDriftSpan steps of the last
};

// How the anomalies table colours a rule's rows.
enum class RuleColour : std::uint8_t {
    by_score,  // red when the value is not finite, yellow when the score is 20 or more
    bad,       // always red: a stall, a rank apart from the others, weights altered between steps
};

struct RuleInfo {
    Rule id;
    std::string_view name;  // as stored, printed and documented (docs/anomalies.md has a **name** entry)
    double (*score)(const AnomalyRecord& a);
    RuleJoin join;
    RuleColour colour;
    bool msprobe_alert;        // one of msprobe's alert.rules (a monitor config may name it)
    bool job_level;            // compares ranks: the job-level judge's findings replace the agents' where it judged
    std::string_view message;  // the form of its message, for the man page
    std::string_view summary;  // one line: what it finds
};

// Every rule, in the order of the enum (and of the docs).
std::span<const RuleInfo> all_rules();
const RuleInfo& rule_info(Rule rule);
std::string_view rule_name(Rule rule);
// The rule of that name, or Rule::unknown.
Rule rule_of(std::string_view name);
inline Rule rule_of(const AnomalyRecord& a) {
    return rule_of(a.rule);
}
inline const RuleInfo& rule_info(const AnomalyRecord& a) {
    return rule_info(rule_of(a));
}

}  // namespace msmon
