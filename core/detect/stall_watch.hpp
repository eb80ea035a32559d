// Stalled ranks: a rank left behind. Its stall time counts from the moment another rank first went past its newest
// step, and it is stalled once that lasts stall_factor × its median step time (and at least stall_min_seconds) with
// another rank two steps or more past it. So a job that ends (every rank at its last step) has no stalled rank, one a
// step behind is ranks writing one after another, and a pause of every rank (msprobe's dynamic collection off between
// two collections, however long) is no stall: the clock starts when the others resume. Step times come only from live
// arrivals: what is read at attach or after msmon restarts arrives at catch-up speed and says nothing about the job's
// pace, and a rank whose job restarted (a new run, steps going back) starts afresh.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/detect/detector_options.hpp"
#include "core/model/anomaly_record.hpp"

namespace msmon {

class StallWatch {
public:
    using Clock = std::chrono::steady_clock;
    explicit StallWatch(const DetectorOptions& options) : options_(options) {}

    // Everything there was has been read: from now on arrivals are the job's pace. Forgets catch-up arrivals.
    void go_live();
    bool live() const { return live_; }
    // A batch brought `step` (its newest) of a rank's run at `now`; only once live.
    void advance(int rank, std::int64_t run_id, std::int64_t step, Clock::time_point now);
    // Ranks stalled at `now`, each reported once per step it stalled at.
    void judge(Clock::time_point now, std::vector<AnomalyRecord>& out);

private:
    struct RankPace {
        std::int64_t last_step = -1;
        std::int64_t run_id = -1;
        Clock::time_point last_advance{};
        std::optional<Clock::time_point> passed_at;  // when another rank first went past last_step
        std::vector<double> intervals;               // seconds per step between live advances, the latest 21
        std::int64_t flagged_step = -1;
    };
    const DetectorOptions& options_;
    std::map<int, RankPace> pace_;
    bool live_ = false;
};

}  // namespace msmon
