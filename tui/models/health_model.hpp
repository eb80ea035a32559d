// What the health view shows: checkpoints and the one to resume from, the job's stop, global-norm spikes and
// data skips against their thresholds, embedding norm, and each rank's progress with stalls flagged.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "store/check_coverage.hpp"
#include "store/reader.hpp"

namespace msmon::tui {

struct RankProgress {
    int rank = 0;
    std::int64_t last_step = -1;
    std::optional<double> step_ms;  // latest per_step_time from the logs
    bool stalled = false;
};

struct HealthModel {
    std::vector<CheckpointRecord> checkpoints;
    // No checkpoint, and health_ckpts.json was found but not read: where, and why (a FIFO, past the JSON bound).
    std::string checkpoints_unread;
    std::optional<std::size_t> latest_healthy;  // index into checkpoints
    std::vector<EventRecord> events;
    std::optional<EventRecord> stop;        // the event that ended the job (stop, or the last error)
    std::vector<StepValue> global_norm;     // max over ranks per step
    std::vector<StepValue> embedding_norm;  // max over ranks per step
    // Steps, not findings: a spike on 8 ranks is one spike step (its findings are one per rank).
    std::set<std::int64_t> spike_steps, embedding_high_steps, data_skip_steps;
    std::set<int> spike_ranks;
    std::optional<double> spike_threshold, embedding_threshold;
    std::vector<ThresholdUse> thresholds;  // what the checks were judged with, and whose (store/reader.hpp)
    std::vector<RankProgress> ranks;
    // msprobe's new run folders (steps trained again), then MindFormers' relaunches in its logs.
    std::vector<Restart> restarts;
    CheckCoverage checks;  // the replica groups learned and the checks across ranks that can't run
};

// `previous`: the last model (what it computed from values that have not changed is kept).
HealthModel collect_health(Reader& reader, const HealthModel* previous = nullptr);

}  // namespace msmon::tui
