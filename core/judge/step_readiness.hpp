// When the job-level judge judges a step. A step is complete once every rank that wrote the step before it has
// written it (with at least as many values: an agent may ship one step in more than one piece) - or, for a step
// with no step judged before it (a judge starting on a job already running), once every rank that wrote the step
// after it has (a rank's steps are written and shipped in order) - or once a grace period has passed since its
// first row was seen, whichever comes first; steps are judged in order. A rank whose rows come to a step after it
// was judged is late: it is reported once it wrote that step whole (or after the grace), to be judged against the
// others then. Times are the judge's own clock (when it saw the rows), never the nodes'.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace msmon {

class StepReadiness {
public:
    using Clock = std::chrono::steady_clock;
    // Judged steps kept to notice late ranks.
    static constexpr std::size_t kLateWindow = 64;

    explicit StepReadiness(Clock::duration grace) : grace_(grace) {}

    // Steps up to `step` were judged before (by a judge before a restart): not judged again, nor late.
    void judged_before(std::int64_t step);
    // What the job's store holds of `step` for `rank`: its count of values (the whole count, each time).
    void observe(std::int64_t step, int rank, std::uint64_t values, Clock::time_point now);
    // The lowest step not judged yet, if it is ready at `now`; with `final` (nothing more will come), any.
    std::optional<std::int64_t> ready(Clock::time_point now, bool final) const;
    // When the lowest waiting step's grace ends (nullopt: no step waits).
    std::optional<Clock::time_point> next_due() const;
    // `step` was judged with the ranks that had come; returns them. A rank with older steps waiting to be judged
    // late is not among them: the step is late for it too, after those.
    std::vector<int> mark_judged(std::int64_t step);
    // Ranks that came to a judged step after it was judged, once they wrote it whole (a later step, or at least as
    // many values as at their step before) or the grace passed: (step, ranks) in step order, each reported once.
    std::vector<std::pair<std::int64_t, std::vector<int>>> take_late(Clock::time_point now);
    // When the first late rank still waiting to be whole is reported anyway (nullopt: none waits).
    std::optional<Clock::time_point> next_late_due() const;
    // The ranks `step` has been judged with so far (late ones included once reported).
    std::vector<int> judged_ranks(std::int64_t step) const;
    // The highest step judged (here or before a restart), if any.
    std::optional<std::int64_t> judged_through() const { return judged_through_; }
    // The lowest step still of interest: where a poll of the store may start.
    std::optional<std::int64_t> oldest_kept() const;
    // Each rank's newest step seen.
    const std::map<int, std::int64_t>& newest() const { return newest_; }

private:
    struct Step {
        std::map<int, std::uint64_t> values;  // rank → values seen
        Clock::time_point first_seen;
        bool judged = false;
        std::set<int> judged_ranks;              // judged with, or reported late
        std::map<int, std::uint64_t> judged_at;  // rank → its values when judged or reported
    };
    const Step* previous_judged(std::int64_t step) const;

    Clock::duration grace_;
    std::map<std::int64_t, Step> steps_;
    std::optional<std::int64_t> judged_through_;
    std::optional<std::int64_t> before_;  // judged before a restart: ignored
    std::map<int, std::int64_t> newest_;
    struct Late {
        std::int64_t step;
        int rank;
        Clock::time_point seen;
    };
    std::vector<Late> late_;  // noticed, not reported yet
};

}  // namespace msmon
