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
    RuleInfo{.id = AnomalyTurbulence,
             .name = "AnomalyTurbulence",
             .score = score_turbulence,
             .join = own_step,
             .colour = by_score,
             .msprobe_alert = true,
             .job_level = false,
             .message =
                 "Rule AnomalyTurbulence reports anomaly signal in ('TAG', 'OP') at step S, current value V, history "
                 "mean H.",
             .summary = "msprobe's rule: a value more than threshold × the series' history mean (EMA of |x|)"},
    RuleInfo{.id = AnomalyNan,
             .name = "AnomalyNan",
             .score = score_anomaly_nan,
             .join = own_step,
             .colour = by_score,
             .msprobe_alert = true,
             .job_level = false,
             .message =
                 "Rule AnomalyNan reports anomaly signal in ('TAG', 'OP') at step S, current value V, history mean H.",
             .summary = "msprobe's rule: a NaN, or a value above an absolute threshold"},
    RuleInfo{
        .id = NonFinite,
        .name = "NonFinite",
        .score = fixed<100>,
        .join = chains,
        .colour = by_score,
        .msprobe_alert = false,
        .job_level = false,
        .message = "KIND NAME became non-finite at step S on rank R (OP V, last finite W); N KIND series of this rank",
        .summary = "a series' nans count leaves 0, or its values turn NaN/Inf after being finite"},
    RuleInfo{.id = Jump,
             .name = "Jump",
             .score = score_jump,
             .join = chains,
             .colour = by_score,
             .msprobe_alert = false,
             .job_level = false,
             .message = "KIND NAME OP jumped ×F at step S on rank R (V, recent median M)",
             .summary = "a norm ×10 (or ÷10) and 8 robust deviations from the median of its last 16 values"},
    RuleInfo{
        .id = Drift,
        .name = "Drift",
        .score = score_drift,
        .join = drift_span,
        .colour = by_score,
        .msprobe_alert = false,
        .job_level = false,
        .message = "KIND NAME OP has drifted ×F above its early level at step S on rank R (recent median M, early E)",
        .summary = "the median of a series' last 16 values grown ×20 above its first full window's"},
    RuleInfo{.id = DeadLayer,
             .name = "DeadLayer",
             .score = fixed<95>,
             .join = chains,
             .colour = by_score,
             .msprobe_alert = false,
             .job_level = false,
             .message = "the layer L died at step S on rank R: NAME is all zeros from this step (zeros Z -> 1)",
             .summary = "a module's output all zeros from one step on, after it was not"},
    RuleInfo{.id = ContinuityBreak,
             .name = "ContinuityBreak",
             .score = fixed<90>,
             .join = chains,
             .colour = bad,
             .msprobe_alert = false,
             .job_level = false,
             .message =
                 "rank R's NAME changed between step S-1's update and step S (OP A after the update, B at the next "
                 "step): …",
             .summary = "a rank's weights changed between param_updated at step t and param_origin at t+1"},
    RuleInfo{
        .id = CrossRankOutlier,
        .name = "CrossRankOutlier",
        .score = score_cross_rank_outlier,
        .join = chains,
        .colour = bad,
        .msprobe_alert = false,
        .job_level = true,
        .message = "rank R: KIND OP far from the other N ranks at step S on F of C series (worst NAME: V vs median M)",
        .summary = "a rank ×10 from the ranks' median and 6 deviations of the series' usual spread"},
    RuleInfo{
        .id = ReplicaDivergence,
        .name = "ReplicaDivergence",
        .score = fixed<85>,
        .join = chains,
        .colour = by_score,
        .msprobe_alert = false,
        .job_level = true,
        .message = "rank R's KIND departs from its N replicas (RANKS) at step S: NAME norm V vs the group's G, …",
        .summary = "a data-parallel replica's copy of a tensor departed from its replicas' (silent data corruption)"},
    RuleInfo{.id = ReplicaTie,
             .name = "ReplicaTie",
             .score = fixed<40>,
             .join = chains,
             .colour = by_score,
             .msprobe_alert = false,
             .job_level = true,
             .message = "rank R's KIND differs from its replica(s) (RANKS) at step S with no value most copies hold: …",
             .summary = "replicas that disagree with no value held by most copies: which copy changed can't be told"},
    RuleInfo{
        .id = OptimizerStep,
        .name = "OptimizerStep",
        .score = fixed<80>,
        .join = chains,
        .colour = by_score,
        .msprobe_alert = false,
        .job_level = true,
        .message = "the optimizer's step grew at step S on N of M ranks: on rank R the update/weight ratio of J of W "
                   "weights jumped, ×F their recent medians (…)",
        .summary = "the optimizer's step changed for every layer at once (learning rate, schedule, loss scale, state)"},
    RuleInfo{
        .id = StalledRank,
        .name = "StalledRank",
        .score = fixed<80>,
        .join = chains,
        .colour = bad,
        .msprobe_alert = false,
        .job_level = true,
        .message = "rank R has written nothing after step S for A s since other ranks went past it (its median step "
                   "time is T s)",
        .summary = "a rank left behind: others went past its newest step 5× its median step time ago (at least 1 s)"},
    RuleInfo{.id = GlobalNormSpike,
             .name = "GlobalNormSpike",
             .score = fixed<50>,
             .join = chains,
             .colour = by_score,
             .msprobe_alert = false,
             .job_level = false,
             .message = "global norm V at step S is above the threshold T: spike N in a row (…)",
             .summary = "MindFormers' global norm at or above its spike threshold (the step's update is skipped)"},
    RuleInfo{
        .id = EmbeddingNormHigh,
        .name = "EmbeddingNormHigh",
        .score = fixed<45>,
        .join = chains,
        .colour = by_score,
        .msprobe_alert = false,
        .job_level = false,
        .message = "embedding local norm V at step S is at or above the threshold T: the checkpoint saved at this step "
                   "will be marked unhealthy",
        .summary = "MindFormers' embedding local norm at or above its threshold (the checkpoint is marked unhealthy)"},
    RuleInfo{.id = unknown,
             .name = "unknown",
             .score = fixed<5>,
             .join = own_step,
             .colour = by_score,
             .msprobe_alert = false,
             .job_level = false,
             .message = "msprobe's message, as written",
             .summary = "a dump entry whose message names no rule msmon knows"},
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
