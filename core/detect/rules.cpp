// The rules' descriptors. Scores: NaN appearing in a finite series 100 (NonFinite, or msprobe's AnomalyNan); a
// module that died 95; a weight changed between steps (ContinuityBreak) 90; a replica departing from its group 85
// (a tie 40); jumps 60 + 10·log10(ratio); rank outliers and stalls 60-80; norm turbulence 10 + 10·log10(ratio);
// mean turbulence 1 + log10(ratio) (means hover around zero, so their ratios are noise); NaN placeholders 0.
#include "core/detect/rules.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace msmon {

namespace {

double reference_of(const AnomalyRecord& a) {
    return a.reference.value_or(std::nan(""));
}

// |value / reference|, or 1e6 when there is no usable reference.
double ratio_to_reference(const AnomalyRecord& a) {
    const double ref = reference_of(a);
    return std::isfinite(ref) && ref != 0 ? std::abs(a.value / ref) : 1e6;
}

double score_anomaly_nan(const AnomalyRecord& a) {
    if (std::isnan(a.value)) return std::isnan(reference_of(a)) ? 0.0 : 100.0;  // NaN after NaN: a placeholder
    return 40.0;                                                                // above an absolute threshold
}

double score_turbulence(const AnomalyRecord& a) {
    const double ref = reference_of(a);
    const double ratio = std::isfinite(ref) && ref > 0 ? std::abs(a.value) / ref : 1e6;
    const double lr = std::log10(std::max(ratio, 1.0));
    return a.op == "norm" ? 10.0 + 10.0 * lr : 1.0 + lr;
}

double score_cross_rank_outlier(const AnomalyRecord& a) {
    if (!std::isfinite(a.value)) return 90.0;  // NaN or Inf on one rank, finite on the others
    return 60.0 + 5.0 * std::abs(std::log10(std::max(ratio_to_reference(a), 1e-12)));
}

double score_jump(const AnomalyRecord& a) {
    return std::min(95.0, 60.0 + 10.0 * std::abs(std::log10(std::max(ratio_to_reference(a), 1e-12))));
}

double score_drift(const AnomalyRecord& a) {
    const double ref = reference_of(a);
    const double ratio = std::isfinite(ref) && ref > 0 ? std::abs(a.value / ref) : 1e6;
    return std::min(90.0, 55.0 + 10.0 * std::log10(std::max(ratio, 1.0)));
}

template <int Score>
double fixed(const AnomalyRecord&) {
    return Score;
}

using enum Rule;
using enum RuleJoin;
using enum RuleColour;

constexpr std::array kRules{
    RuleInfo{AnomalyTurbulence, "AnomalyTurbulence", score_turbulence, own_step, by_score, true, false,
             "Rule AnomalyTurbulence reports anomaly signal in ('TAG', 'OP') at step S, current value V, history "
             "mean H.",
             "msprobe's rule: a value more than threshold × the series' history mean (EMA of |x|)"},
    RuleInfo{AnomalyNan, "AnomalyNan", score_anomaly_nan, own_step, by_score, true, false,
             "Rule AnomalyNan reports anomaly signal in ('TAG', 'OP') at step S, current value V, history mean H.",
             "msprobe's rule: a NaN, or a value above an absolute threshold"},
    RuleInfo{NonFinite, "NonFinite", fixed<100>, chains, by_score, false, false,
             "KIND NAME became non-finite at step S on rank R (OP V, last finite W); N KIND series of this rank",
             "a series' nans count leaves 0, or its values turn NaN/Inf after being finite"},
    RuleInfo{Jump, "Jump", score_jump, chains, by_score, false, false,
             "KIND NAME OP jumped ×F at step S on rank R (V, recent median M)",
             "a norm ×10 (or ÷10) and 8 robust deviations from the median of its last 16 values"},
    RuleInfo{Drift, "Drift", score_drift, drift_span, by_score, false, false,
             "KIND NAME OP has drifted ×F above its early level at step S on rank R (recent median M, early E)",
             "the median of a series' last 16 values grown ×20 above its first full window's"},
    RuleInfo{DeadLayer, "DeadLayer", fixed<95>, chains, by_score, false, false,
             "the layer L died at step S on rank R: NAME is all zeros from this step (zeros Z -> 1)",
             "a module's output all zeros from one step on, after it was not"},
    RuleInfo{ContinuityBreak, "ContinuityBreak", fixed<90>, chains, bad, false, false,
             "rank R's NAME changed between step S-1's update and step S (OP A after the update, B at the next "
             "step): …",
             "a rank's weights changed between param_updated at step t and param_origin at t+1"},
    RuleInfo{CrossRankOutlier, "CrossRankOutlier", score_cross_rank_outlier, chains, bad, false, true,
             "rank R: KIND OP far from the other N ranks at step S on F of C series (worst NAME: V vs median M)",
             "a rank ×10 from the ranks' median and 6 deviations of the series' usual spread"},
    RuleInfo{ReplicaDivergence, "ReplicaDivergence", fixed<85>, chains, by_score, false, true,
             "rank R's KIND departs from its N replicas (RANKS) at step S: NAME norm V vs the group's G, …",
             "a data-parallel replica's copy of a tensor departed from its replicas' (silent data corruption)"},
    RuleInfo{ReplicaTie, "ReplicaTie", fixed<40>, chains, by_score, false, true,
             "rank R's KIND differs from its replica(s) (RANKS) at step S with no value most copies hold: …",
             "replicas that disagree with no value held by most copies: which copy changed can't be told"},
    RuleInfo{OptimizerStep, "OptimizerStep", fixed<80>, chains, by_score, false, true,
             "the optimizer's step grew at step S on N of M ranks: on rank R the update/weight ratio of J of W "
             "weights jumped, ×F their recent medians (…)",
             "the optimizer's step changed for every layer at once (learning rate, schedule, loss scale, state)"},
    RuleInfo{StalledRank, "StalledRank", fixed<80>, chains, bad, false, true,
             "rank R has written nothing after step S for A s since other ranks went past it (its median step "
             "time is T s)",
             "a rank left behind: others went past its newest step 5× its median step time ago (at least 1 s)"},
    RuleInfo{GlobalNormSpike, "GlobalNormSpike", fixed<50>, chains, by_score, false, false,
             "global norm V at step S is above the threshold T: N of C consecutive spikes (…)",
             "MindFormers' global norm at or above its spike threshold (the step's update is skipped)"},
    RuleInfo{EmbeddingNormHigh, "EmbeddingNormHigh", fixed<45>, chains, by_score, false, false,
             "embedding local norm V at step S is at or above the threshold T: the checkpoint saved at this step "
             "will be marked unhealthy",
             "MindFormers' embedding local norm at or above its threshold (the checkpoint is marked unhealthy)"},
    RuleInfo{unknown, "unknown", fixed<5>, own_step, by_score, false, false, "msprobe's message, as written",
             "a dump entry whose message names no rule msmon knows"},
};

constexpr bool in_enum_order() {
    for (std::size_t i = 0; i < kRules.size(); ++i)
        if (static_cast<std::size_t>(kRules[i].id) != i) return false;
    return true;
}
static_assert(in_enum_order(), "kRules lists the rules in the order of enum Rule");
static_assert(kRules.back().id == Rule::unknown, "every rule of enum Rule has its descriptor");

}  // namespace

std::span<const RuleInfo> all_rules() {
    return kRules;
}

const RuleInfo& rule_info(Rule rule) {
    return kRules[static_cast<std::size_t>(rule)];
}

std::string_view rule_name(Rule rule) {
    return rule_info(rule).name;
}

Rule rule_of(std::string_view name) {
    for (const RuleInfo& r : kRules)
        if (r.name == name) return r.id;
    return Rule::unknown;
}

}  // namespace msmon
