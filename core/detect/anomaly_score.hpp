// msmon's ranking of anomalies: what a person should look at first. msprobe's rules fire on every mean near
// zero and on NaN placeholders every step; a jump in a norm, a NaN in a series that was finite, a rank far from
// the others, a stopped rank — those are the events.
#pragma once

#include "core/model/anomaly_record.hpp"

namespace msmon {

// Severity of one anomaly on its own (breadth — how many series fired at the same step — is added when listed).
double anomaly_score(const AnomalyRecord& a);

}  // namespace msmon
