// An anomaly's score is its rule's (core/detect/rules.cpp holds each rule's and why); a score that came out
// NaN or infinite ranks as an unknown rule's.
#include "core/detect/anomaly_score.hpp"

#include <cmath>

#include "core/detect/rules.hpp"

namespace msmon {

double anomaly_score(const AnomalyRecord& a) {
    const double s = rule_info(a).score(a);
    return std::isfinite(s) ? s : rule_info(Rule::unknown).score(a);
}

}  // namespace msmon
