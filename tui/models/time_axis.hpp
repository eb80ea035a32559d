// The Chart's x axis in time: each step placed at when it was written (Reader::step_times), a pause longer than
// kClipFactor times the median step time clipped to twice the median and marked, so a job that hung for an hour
// does not squeeze its steps into one edge. Positions are ms of that clipped time from the first step.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/reader.hpp"

namespace msmon::tui {

enum class XAxis { step, wall, elapsed };

inline constexpr double kClipFactor = 10;

struct ClippedPause {
    std::int64_t after_step = 0, before_step = 0;
    std::int64_t ms = 0;  // how long it really was
    std::int64_t x = 0;   // where it is on the axis
};

class TimeAxis {
public:
    TimeAxis() = default;
    explicit TimeAxis(std::vector<StepWallTime> times);

    bool empty() const { return times_.empty(); }
    // The x of a step with a time; a step without one sits at the x of the step before it that has one (none
    // before the first).
    std::optional<std::int64_t> x_of(std::int64_t step) const;
    // The step at x (the last one at or before it).
    std::int64_t step_at(std::int64_t x) const;
    // An x position as text: the wall clock ("12:03:44", local time) or the time since the first step ("+5m12s",
    // pauses counted whole).
    std::string label(std::int64_t x, XAxis mode) const;
    const std::vector<ClippedPause>& pauses() const { return pauses_; }
    std::int64_t median_ms() const { return median_ms_; }

private:
    std::vector<StepWallTime> times_;  // step-sorted
    std::vector<std::int64_t> x_;      // per time
    std::vector<ClippedPause> pauses_;
    std::int64_t median_ms_ = 0;
};

// "61s", "5m12s", "2h03m".
std::string duration_text(std::int64_t ms);

}  // namespace msmon::tui
