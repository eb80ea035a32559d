// Steps on a clipped time axis.
#include "tui/models/time_axis.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace msmon::tui {

std::string duration_text(std::int64_t ms) {
    const std::int64_t s = ms / 1000;
    char buf[32];
    if (s < 100) std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
    else if (s < 3600)
        std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
    else
        std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(s / 3600),
                      static_cast<long long>(s / 60 % 60));
    return buf;
}

TimeAxis::TimeAxis(std::vector<StepWallTime> times) : times_(std::move(times)) {
    if (times_.empty()) return;
    std::vector<std::int64_t> gaps;
    for (std::size_t i = 1; i < times_.size(); ++i)
        gaps.push_back(std::max<std::int64_t>(0, times_[i].wall_ms - times_[i - 1].wall_ms));
    if (!gaps.empty()) {
        std::vector<std::int64_t> sorted = gaps;
        std::nth_element(sorted.begin(), sorted.begin() + static_cast<long>(sorted.size() / 2), sorted.end());
        median_ms_ = sorted[sorted.size() / 2];
    }
    // A pause: longer than kClipFactor medians, and than a second (steps written in one burst have a median of 0).
    const auto limit =
        std::max<std::int64_t>(1000, static_cast<std::int64_t>(kClipFactor * static_cast<double>(median_ms_)));
    const std::int64_t clipped = std::max<std::int64_t>(1, 2 * median_ms_);
    x_.push_back(0);
    for (std::size_t i = 1; i < times_.size(); ++i) {
        const std::int64_t gap = gaps[i - 1];
        if (gap > limit) {
            pauses_.push_back({times_[i - 1].step, times_[i].step, gap, x_.back() + clipped / 2});
            x_.push_back(x_.back() + clipped);
        } else {
            x_.push_back(x_.back() + gap);
        }
    }
}

std::optional<std::int64_t> TimeAxis::x_of(std::int64_t step) const {
    const auto it = std::upper_bound(times_.begin(), times_.end(), step,
                                     [](std::int64_t s, const StepWallTime& t) { return s < t.step; });
    if (it == times_.begin()) return std::nullopt;
    return x_[static_cast<std::size_t>(it - times_.begin()) - 1];
}

std::int64_t TimeAxis::step_at(std::int64_t x) const {
    if (times_.empty()) return 0;
    const auto it = std::upper_bound(x_.begin(), x_.end(), x);
    const std::size_t i = it == x_.begin() ? 0 : static_cast<std::size_t>(it - x_.begin()) - 1;
    return times_[i].step;
}

std::string TimeAxis::label(std::int64_t x, XAxis mode) const {
    if (times_.empty()) return std::to_string(x);
    // The real time at x: the time of the step at or before it, plus how far past it x is (never into a pause).
    const auto it = std::upper_bound(x_.begin(), x_.end(), x);
    const std::size_t i = it == x_.begin() ? 0 : static_cast<std::size_t>(it - x_.begin()) - 1;
    std::int64_t past = x - x_[i];
    if (i + 1 < x_.size()) past = std::min(past, times_[i + 1].wall_ms - times_[i].wall_ms);
    const std::int64_t wall = times_[i].wall_ms + std::max<std::int64_t>(0, past);
    if (mode == XAxis::elapsed) return "+" + duration_text(wall - times_.front().wall_ms);
    const std::time_t t = static_cast<std::time_t>(wall / 1000);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[16];
    std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
    return buf;
}

}  // namespace msmon::tui
