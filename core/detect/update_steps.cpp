// Update ratios and the optimizer-jump decision (see the header).
#include "core/detect/update_steps.hpp"

#include <algorithm>
#include <cmath>

namespace msmon {

std::optional<double> update_ratio(double origin_norm, double updated_norm) {
    if (origin_norm == 0) return std::nullopt;  // NaN or Inf pass through: a chart marks them
    return std::abs(updated_norm - origin_norm) / std::abs(origin_norm);
}

UpdateHistory::Verdict UpdateHistory::add(double ratio) {
    Verdict v;
    if (!(ratio > 0) || !std::isfinite(ratio)) return v;
    const double y = std::log(ratio);
    if (kept_ >= kUpdateMinHistory) {
        std::array<float, kUpdateHistory> sorted = logs_;
        const auto n = static_cast<std::size_t>(kept_);
        for (std::size_t i = 1; i < n; ++i)  // insertion sort of at most 8 (std::sort trips GCC 12's bounds warning)
            for (std::size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; --j) std::swap(sorted[j - 1], sorted[j]);
        const double med = n % 2 ? sorted[n / 2] : (static_cast<double>(sorted[n / 2 - 1]) + sorted[n / 2]) / 2;
        v.judged = true;
        v.median = std::exp(med);
        v.jumped = y - med >= std::log(kUpdateJumpRatio);
    }
    logs_[static_cast<std::size_t>(next_)] = static_cast<float>(y);
    next_ = (next_ + 1) % kUpdateHistory;
    kept_ = std::min(kept_ + 1, kUpdateHistory);
    return v;
}

std::vector<const RankUpdateTally*> optimizer_jump(const std::vector<RankUpdateTally>& tallies, bool& open) {
    std::vector<const RankUpdateTally*> jumped;
    std::size_t judging = 0;
    for (const auto& t : tallies) {
        if (!t.judged) continue;
        ++judging;
        if (t.jumped * 2 > t.judged) jumped.push_back(&t);
    }
    if (judging == 0) return {};
    if (jumped.size() * 4 < judging) open = false;  // (almost) no rank still jumps: the next jump is new
    if (open || jumped.size() * 4 < judging * 3) return {};
    open = true;
    return jumped;
}

}  // namespace msmon
