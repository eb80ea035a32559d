// Incidents: anomalies that belong to one event, with the anomaly where it began first. A NaN in one module of one
// rank reaches every later module, the backward pass, every rank after the all-reduce and the optimizer's state
// within a step or two; a corrupt batch moves a rank's activations, then everyone's gradients. msmon's
// detectors report each of those; the person needs the event and its origin.
//
// Grouping: anomalies of one step are one incident; msmon's own detections chain into the incident of the step
// before (an event spreads into the next step: the weights it corrupted, the optimizer's moments). msprobe's
// rules do not chain, whether from its dumps or run by msmon from the job's config (they fire on near-zero
// means every few steps, which would chain a whole run). A drift is slow: each rank and tensor crosses the
// threshold at its own step, so msmon's Drift findings are one incident while each comes within kDriftSpan
// steps of the one before, whatever else happens at those steps.
// Origin: among the incident's members scored at least half its most severe one, the earliest in training
// order: step, then where the kind is produced in a step (kind_step_order), then rank, then forward order within
// the rank's kind (call_id: msmon's detections carry the tensor's order, msprobe's dumps its call id).
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/anomaly_record.hpp"

namespace msmon {

inline constexpr std::int64_t kDriftSpan = 64;
// Incidents scored below this are msprobe's per-step noise (a mean near zero, a NaN placeholder): no mark in the
// TUI, no bell, no --on-incident command.
inline constexpr double kIncidentScore = 20;

struct Incident {
    std::size_t origin = 0;            // index into the anomalies given
    std::vector<std::size_t> members;  // the origin first, then in training order
    std::int64_t first_step = 0, last_step = 0;
    std::vector<int> ranks;  // every rank with a member, ascending
    double score = 0;        // the most severe member's score
};

// `anomalies` in any order. Incidents most severe first (ties: more anomalies, then earlier).
std::vector<Incident> group_incidents(const std::vector<AnomalyRecord>& anomalies);

// Training order of two anomalies (step, kind, rank, forward order).
bool training_order_less(const AnomalyRecord& a, const AnomalyRecord& b);

}  // namespace msmon
