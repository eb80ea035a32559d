// Scores: NaN appearing in a finite series 100 (NonFinite, or msprobe's AnomalyNan); a weight changed between steps
// (ContinuityBreak) 90; a replica departing from its group 85 (a tie 40); jumps 60 + 10·log10(ratio); rank outliers and
// stalls 60-80; norm jumps 10 + 10·log10(ratio); mean jumps 1 + log10(ratio) (means hover around zero, so their ratios
// are noise); NaN placeholders 0.
#include "core/detect/anomaly_score.hpp"

#include <algorithm>
#include <cmath>

namespace msmon {

namespace {

double raw_score(const AnomalyRecord& a) {
    const double ref = a.reference.value_or(std::nan(""));
    if (a.rule == "AnomalyNan") {
        if (std::isnan(a.value)) return std::isnan(ref) ? 0.0 : 100.0;  // NaN after NaN: a placeholder series
        return 40.0;                                                    // above an absolute threshold
    }
    if (a.rule == "AnomalyTurbulence") {
        const double ratio = std::isfinite(ref) && ref > 0 ? std::abs(a.value) / ref : 1e6;
        const double lr = std::log10(std::max(ratio, 1.0));
        return a.op == "norm" ? 10.0 + 10.0 * lr : 1.0 + lr;
    }
    if (a.rule == "CrossRankOutlier") {
        if (!std::isfinite(a.value)) return 90.0;  // NaN or Inf on one rank, finite on the others
        const double ratio = std::isfinite(ref) && ref != 0 ? std::abs(a.value / ref) : 1e6;
        return 60.0 + 5.0 * std::abs(std::log10(std::max(ratio, 1e-12)));
    }
    if (a.rule == "NonFinite") return 100.0;
    if (a.rule == "Jump") {
        const double ratio = std::isfinite(ref) && ref != 0 ? std::abs(a.value / ref) : 1e6;
        return std::min(95.0, 60.0 + 10.0 * std::abs(std::log10(std::max(ratio, 1e-12))));
    }
    if (a.rule == "Drift") {
        const double ratio = std::isfinite(ref) && ref > 0 ? std::abs(a.value / ref) : 1e6;
        return std::min(90.0, 55.0 + 10.0 * std::log10(std::max(ratio, 1.0)));
    }
    if (a.rule == "StalledRank") return 80.0;
    if (a.rule == "ContinuityBreak") return 90.0;  // a weight changed with no optimizer step: corruption
    // A replica's copy departs from its group: corruption, whatever the size of the difference. A tie can't say
    // which copy changed: below half of the break that can (so that it never becomes an incident's origin).
    if (a.rule == "ReplicaDivergence") return 85.0;
    if (a.rule == "ReplicaTie") return 40.0;
    if (a.rule == "OptimizerStep") return 80.0;  // every weight's update jumped at once
    if (a.rule == "DeadLayer") return 95.0;      // a module that passes nothing on never recovers by itself
    if (a.rule == "GlobalNormSpike") return 50.0;
    if (a.rule == "EmbeddingNormHigh") return 45.0;
    return 5.0;
}

}  // namespace

double anomaly_score(const AnomalyRecord& a) {
    const double s = raw_score(a);
    return std::isfinite(s) ? s : 5.0;
}

}  // namespace msmon
