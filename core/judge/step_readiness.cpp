// Steps waiting and judged (see the header).
#include "core/judge/step_readiness.hpp"

#include <algorithm>
#include <iterator>
#include <tuple>

namespace msmon {

void StepReadiness::judged_before(std::int64_t step) {
    before_ = step;
    if (!judged_through_ || *judged_through_ < step) judged_through_ = step;
    steps_.erase(steps_.begin(), steps_.upper_bound(step));
}

void StepReadiness::observe(std::int64_t step, int rank, std::uint64_t values, Clock::time_point now) {
    auto [newest, first] = newest_.try_emplace(rank, step);
    if (!first && step > newest->second) newest->second = step;
    if (before_ && step <= *before_) return;
    // At or below the highest judged step and not kept: judged long ago, or a step no other rank wrote that
    // came after later steps were judged (steps are judged in order). Not judged.
    if (judged_through_ && step <= *judged_through_ && !steps_.count(step)) return;
    auto [it, added] = steps_.try_emplace(step);
    Step& s = it->second;
    if (added) s.first_seen = now;
    auto& seen = s.values[rank];
    seen = std::max(seen, values);
    if (!s.judged) return;
    const bool first_time = s.judged_ranks.insert(rank).second;
    const auto judged_with = s.judged_at.find(rank);
    const bool grew = !first_time && judged_with != s.judged_at.end() && seen > judged_with->second;
    if (!first_time && !grew) return;  // every kept step is observed on every poll: the scan below only when needed
    const bool pending =
        std::any_of(late_.begin(), late_.end(), [&](const Late& l) { return l.step == step && l.rank == rank; });
    if (!pending) late_.push_back({step, rank, now});
}

const StepReadiness::Step* StepReadiness::previous_judged(std::int64_t step) const {
    auto it = steps_.lower_bound(step);
    while (it != steps_.begin()) {
        --it;
        if (it->second.judged) return &it->second;
    }
    return nullptr;
}

std::optional<std::int64_t> StepReadiness::ready(Clock::time_point now, bool final) const {
    for (auto it = steps_.begin(); it != steps_.end(); ++it) {
        const std::int64_t step = it->first;
        const Step& s = it->second;
        if (s.judged) continue;
        if (final || now - s.first_seen >= grace_) return step;
        const Step* prev = previous_judged(step);
        if (!prev || prev->values.empty()) {
            // No step judged before it (a judge starting on a running job): every rank that wrote the next step has
            // written this one whole, as a rank writes its steps, and its agent ships them, in order.
            const auto next = std::next(it);
            const bool complete =
                next != steps_.end() && std::all_of(next->second.values.begin(), next->second.values.end(),
                                                    [&](const auto& rv) { return s.values.count(rv.first) > 0; });
            return complete ? std::optional(step) : std::nullopt;
        }
        for (const auto& [rank, n] : prev->values) {
            const auto here = s.values.find(rank);
            if (here == s.values.end() || here->second < n) return std::nullopt;
        }
        return step;
    }
    return std::nullopt;
}

std::optional<StepReadiness::Clock::time_point> StepReadiness::next_due() const {
    for (const auto& [step, s] : steps_)
        if (!s.judged) return s.first_seen + grace_;
    return std::nullopt;
}

std::vector<int> StepReadiness::mark_judged(std::int64_t step) {
    auto [it, added] = steps_.try_emplace(step);
    Step& s = it->second;
    s.judged = true;
    std::vector<int> ranks;
    std::set<int> behind;  // ranks with older steps still to be judged late
    for (const Late& l : late_) behind.insert(l.rank);
    for (const auto& [rank, n] : s.values) {
        s.judged_ranks.insert(rank);
        // A rank with older steps still to be judged late is judged here after them, late too: a rank's steps are
        // judged in its order, or what it is compared with would be learned from its future.
        if (behind.count(rank)) {
            late_.push_back({step, rank, s.first_seen});
            continue;
        }
        s.judged_at[rank] = n;
        ranks.push_back(rank);
    }
    if (!judged_through_ || *judged_through_ < step) judged_through_ = step;
    // Keep the newest kLateWindow judged steps (and every step waiting).
    std::size_t judged = 0;
    for (auto r = steps_.rbegin(); r != steps_.rend(); ++r) judged += r->second.judged;
    for (auto at = steps_.begin(); at != steps_.end() && judged > kLateWindow;) {
        if (!at->second.judged) break;
        at = steps_.erase(at);
        --judged;
    }
    return ranks;
}

std::vector<std::pair<std::int64_t, std::vector<int>>> StepReadiness::take_late(Clock::time_point now) {
    std::map<std::int64_t, std::vector<int>> ready;
    std::vector<Late> waiting;
    // A rank's late steps in step order: one waiting holds back its later ones.
    std::sort(late_.begin(), late_.end(),
              [](const Late& a, const Late& b) { return std::tie(a.rank, a.step) < std::tie(b.rank, b.step); });
    for (const Late& l : late_) {
        const auto at = steps_.find(l.step);
        if (at == steps_.end()) continue;  // out of the window by now
        if (!waiting.empty() && waiting.back().rank == l.rank) {
            waiting.push_back(l);
            continue;
        }
        // Whole once it wrote a later step (a rank's steps are written and shipped in order), or has as many values
        // as at the newest step before it that it wrote.
        const auto newest = newest_.find(l.rank);
        bool whole = now - l.seen >= grace_ || (newest != newest_.end() && newest->second > l.step);
        for (auto before = std::make_reverse_iterator(at); !whole && before != steps_.rend(); ++before) {
            const auto prev = before->second.values.find(l.rank);
            if (prev == before->second.values.end()) continue;
            whole = at->second.values.at(l.rank) >= prev->second;
            break;
        }
        if (whole) {
            ready[l.step].push_back(l.rank);
            at->second.judged_at[l.rank] = at->second.values.at(l.rank);
        } else waiting.push_back(l);
    }
    late_ = std::move(waiting);
    std::vector<std::pair<std::int64_t, std::vector<int>>> out(ready.begin(), ready.end());
    for (auto& [step, ranks] : out) std::sort(ranks.begin(), ranks.end());
    return out;
}

std::optional<StepReadiness::Clock::time_point> StepReadiness::next_late_due() const {
    std::optional<Clock::time_point> due;
    for (const Late& l : late_)
        if (!due || l.seen + grace_ < *due) due = l.seen + grace_;
    return due;
}

std::vector<int> StepReadiness::judged_ranks(std::int64_t step) const {
    const auto at = steps_.find(step);
    if (at == steps_.end()) return {};
    std::vector<int> out;
    for (int r : at->second.judged_ranks)
        if (std::none_of(late_.begin(), late_.end(), [&](const Late& l) { return l.step == step && l.rank == r; }))
            out.push_back(r);
    return out;
}

std::optional<std::int64_t> StepReadiness::oldest_kept() const {
    if (!steps_.empty()) return steps_.begin()->first;
    if (judged_through_) return *judged_through_ + 1;
    return std::nullopt;
}

}  // namespace msmon
