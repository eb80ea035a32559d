// A rank's runs as segments of one training: a job that restarts writes new run folders (msprobe: a new
// <time>-rank<N>-<uid> folder per rank) that begin again at the step of the checkpoint it resumed from, so the
// steps from there to where the old run stopped were trained twice. For such a step, the later run's value is
// the one that counts (what the Overview, the Chart's line and the detectors use); the earlier run's stretch
// from that step on was abandoned (the Chart draws it faint). Runs are ordered by their folder's time, then by
// the order they were found; runs of different formats (msprobe CSVs, MindFormers logs, TensorBoard files)
// are separate timelines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/model/record_batch.hpp"

namespace msmon {

struct RunSegment {
    std::int64_t run_id = 0;
    int rank = 0;
    std::string format;                           // msprobe, msprobe_v2, mindformers, ...
    std::string path;                             // the run's folder
    std::string time_label;                       // "Nov22_13-55-47" (msprobe v1); empty otherwise
    std::int64_t first_step = 0, last_step = -1;  // the steps it holds rows for
    // A later run of the same rank and format trained again from this step: [retrained_from, last_step] was
    // abandoned. None: every step of this run counts.
    std::optional<std::int64_t> retrained_from;
};

// The order of runs in one timeline: the folder's time (when it has one), then the run id (found first).
std::pair<std::int64_t, std::int64_t> run_order(const std::string& time_label, std::int64_t run_id);

// Sorts `segments` by rank, format, run order, and sets each one's retrained_from: the smallest first step (not
// before this run's own first) of the later runs of its timeline that began at or before this run's last step.
void order_segments(std::vector<RunSegment>& segments);

// One restart of the job as the ranks saw it: the ranks whose new runs began at `resumed_at` after their previous
// run had reached `reached` (steps resumed_at..reached were trained twice; none when the new run began later).
struct Restart {
    std::string time_label;  // of the new runs (the earliest of them)
    std::string format;
    std::int64_t resumed_at = 0;
    std::int64_t reached = 0;
    std::vector<int> ranks;   // ascending
    std::size_t ordinal = 1;  // 1 for the job's first restart, 2 for the next, ...
    // From a log: MindFormers started again after `reached` (its "start" line came after that step's); where it
    // resumed the log does not say (resumed_at is meaningless).
    bool from_log = false;
};

// From ordered segments (order_segments): every run after a rank's first, grouped by (which restart of the rank,
// where it resumed, where the run before it stopped), in training order.
std::vector<Restart> restarts_of(const std::vector<RunSegment>& ordered);

// MindFormers relaunches in one log: a "start" event logged after a step (a first start has no step), grouped by
// that step over the ranks.
std::vector<Restart> relaunches_from_events(const std::vector<EventRecord>& events);

// Every restart of the job, once: those of the runs (msprobe's new folders, MindFormers' relaunches as runs of
// their own), a restart that several formats saw alike (same ranks, same steps) listed once, and the
// relaunches found only in the logs' events (a store read before relaunches had runs of their own).
std::vector<Restart> job_restarts(const std::vector<RunSegment>& ordered, const std::vector<EventRecord>& events);

// The checkpoint a restart resumed from: the latest one at or before the step it resumed at (any health), or
// none. An index into `checkpoints`.
std::optional<std::size_t> resumed_checkpoint(const Restart& r, const std::vector<CheckpointRecord>& checkpoints);

// One line for a person: "restart 1 at Nov26_14-42-31: ranks 0-1 resumed at step 40 after step 45 (steps 40-45
// trained twice), from checkpoint NAME (step 40)".
std::string describe_restart(const Restart& r, const std::vector<CheckpointRecord>& checkpoints);

// "rank 3", "ranks 0-7", "5 ranks" (not one run of numbers).
std::string rank_set_text(const std::vector<int>& ascending);

// The run whose value counts at `step` on `rank` among runs that hold it: the latest in run order. `order` gives
// each candidate's run order; the index of the winner in `candidates`, or -1 if empty.
template <typename Candidate, typename OrderOf>
int latest_run(const std::vector<Candidate>& candidates, OrderOf order) {
    int best = -1;
    for (std::size_t i = 0; i < candidates.size(); ++i)
        if (best < 0 || order(candidates[static_cast<std::size_t>(best)]) < order(candidates[i]))
            best = static_cast<int>(i);
    return best;
}

}  // namespace msmon
