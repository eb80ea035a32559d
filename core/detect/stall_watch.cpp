// Stalled ranks from live arrival times (see the header).
#include "core/detect/stall_watch.hpp"

#include <algorithm>
#include <cmath>

#include "core/detect/anomaly_builder.hpp"
#include "core/detect/median.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

void StallWatch::go_live() {
    if (!live_) pace_.clear();
    live_ = true;
}

void StallWatch::advance(int rank, std::int64_t run_id, std::int64_t step, Clock::time_point now) {
    if (!live_) return;
    RankPace& p = pace_[rank];
    if (run_id != p.run_id) {  // first sight, or the job restarted: its steps may go back
        p = RankPace{};
        p.run_id = run_id;
    } else {
        if (step <= p.last_step) return;
        // Seconds per step: a batch may bring several steps of a rank at once.
        p.intervals.push_back(std::chrono::duration<double>(now - p.last_advance).count() /
                              static_cast<double>(step - p.last_step));
        if (p.intervals.size() > 21) p.intervals.erase(p.intervals.begin());
    }
    p.last_step = step;
    p.last_advance = now;
    // Stall clocks: this rank's starts now if another is already past it; another's starts now if this rank just
    // went past it.
    p.passed_at.reset();
    for (auto& [other, q] : pace_) {
        if (other == rank) continue;
        if (q.last_step > p.last_step && !p.passed_at) p.passed_at = now;
        if (q.last_step < p.last_step && !q.passed_at) q.passed_at = now;
    }
}

void StallWatch::judge(Clock::time_point now, std::vector<AnomalyRecord>& out) {
    if (pace_.size() < 2) return;
    for (auto& [rank, p] : pace_) {
        if (static_cast<int>(p.intervals.size()) < options_.stall_min_intervals || p.flagged_step == p.last_step)
            continue;
        if (!p.passed_at) continue;  // no rank is past it
        const double med = median_of(p.intervals);
        const double age = std::chrono::duration<double>(now - *p.passed_at).count();
        if (age <= options_.stall_factor * med || age < options_.stall_min_seconds) continue;
        // Behind: another rank (of the same job's pace) has written two later steps since. Ranks that all stopped
        // at one step (the job ended, or hangs as a whole) are not a stalled rank, nor is one that is a step behind
        // because ranks write their step one after another (a writer paused between two ranks' files of one step
        // under load).
        bool behind = false;
        for (const auto& [other, q] : pace_)
            if (other != rank && q.last_step > p.last_step &&
                static_cast<std::uint64_t>(q.last_step) - static_cast<std::uint64_t>(p.last_step) >= 2 &&
                q.last_advance > p.last_advance)
                behind = true;
        if (!behind) continue;
        p.flagged_step = p.last_step;
        std::string message = "rank " + std::to_string(rank) + " has written nothing after step " +
                              std::to_string(p.last_step) + " for " + format_double(std::round(age * 10) / 10) +
                              " s since other ranks went past it (its median step time is " +
                              format_double(std::round(med * 1000) / 1000) + " s)";
        out.push_back(detected_anomaly(
            Rule::StalledRank, {.rank = rank, .step = p.last_step, .op = "seconds", .value = age, .reference = med},
            std::move(message)));
    }
}

}  // namespace msmon
