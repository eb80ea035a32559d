// The ratio to a baseline, and where it parted.
#include "tui/models/baseline_ratio.hpp"

#include <cmath>
#include <cstdio>

namespace msmon::tui {

namespace {

std::string times(double r) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "x%.3g", r);
    return buf;
}

}  // namespace

BaselineRatio ratio_to_baseline(const std::vector<StepValue>& current, const std::vector<StepValue>& baseline) {
    BaselineRatio out;
    const double limit = std::log(kDivergenceFactor);
    int beyond_run = 0;
    std::int64_t run_start = 0;
    std::size_t b = 0;
    for (const StepValue& c : current) {
        while (b < baseline.size() && baseline[b].step < c.step) ++b;
        if (b == baseline.size() || baseline[b].step != c.step || !std::isfinite(c.value) ||
            !std::isfinite(baseline[b].value) || baseline[b].value == 0) {
            ++out.unmatched;
            continue;
        }
        const double r = c.value / baseline[b].value;
        out.points.push_back({c.step, r});
        const double distance = std::abs(std::log(std::abs(r)));
        if (out.points.size() == 1 ||
            (std::isfinite(distance) && distance > std::abs(std::log(std::abs(out.farthest))))) {
            out.farthest = r;
            out.farthest_step = c.step;
        }
        if (r > 0 && distance > limit) {
            if (beyond_run++ == 0) run_start = c.step;
            if (beyond_run >= kDivergenceSteps && !out.parted_from) out.parted_from = run_start;
        } else {
            beyond_run = 0;
        }
    }
    out.summary = "ratio to baseline: ";
    if (out.points.empty()) {
        out.summary += "no step in common";
        return out;
    }
    out.summary += out.parted_from
                       ? "beyond " + times(kDivergenceFactor) + " from step " + std::to_string(*out.parted_from)
                       : "never 3 steps in a row beyond " + times(kDivergenceFactor);
    out.summary += ", farthest " + times(out.farthest) + " at step " + std::to_string(out.farthest_step);
    if (out.unmatched)
        out.summary += ", " + std::to_string(out.unmatched) + (out.unmatched == 1 ? " step" : " steps") +
                       " without a baseline value";
    return out;
}

}  // namespace msmon::tui
