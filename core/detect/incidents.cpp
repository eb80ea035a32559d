// Grouping of anomalies into incidents (see the header for the rules).
#include "core/detect/incidents.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "core/detect/rules.hpp"
#include "core/detect/step_order.hpp"

namespace msmon {

bool training_order_less(const AnomalyRecord& a, const AnomalyRecord& b) {
    // Forward order (call_id) is only comparable within one rank: msmon's detections carry tensor ids, which
    // follow the order a rank's files list them but interleave between ranks.
    // At one place, the more severe first (a DeadLayer named by the module a Jump is on).
    return std::make_tuple(a.step, kind_step_order(a.kind), a.kind, a.rank, a.call_id, -a.score) <
           std::make_tuple(b.step, kind_step_order(b.kind), b.kind, b.rank, b.call_id, -b.score);
}

namespace {

// msmon's own detectors chain; msprobe's rules (its dumps, or msmon running them from the job's config) do not.
bool chains_steps(const AnomalyRecord& a) {
    return a.source == "detected" && rule_info(a).join != RuleJoin::own_step;
}

// A drift is found on each rank and tensor when its own median crosses the threshold: steps apart.
bool is_drift(const AnomalyRecord& a) {
    return a.source == "detected" && rule_info(a).join == RuleJoin::drift_span;
}

}  // namespace

std::vector<Incident> group_incidents(const std::vector<AnomalyRecord>& anomalies) {
    std::vector<std::size_t> order(anomalies.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return training_order_less(anomalies[x], anomalies[y]); });
    std::vector<Incident> out;
    // Drifts first: one incident for the findings of one slow growth, each within kDriftSpan steps of the last.
    std::vector<std::size_t> steady;
    for (std::size_t m : order) {
        if (!is_drift(anomalies[m])) {
            steady.push_back(m);
            continue;
        }
        const std::int64_t step = anomalies[m].step;
        if (out.empty() || step > out.back().last_step + kDriftSpan) {
            out.emplace_back();
            out.back().first_step = step;
        }
        out.back().last_step = step;
        out.back().members.push_back(m);
    }
    order = std::move(steady);
    bool open_has_detected = false;
    const std::size_t drifts = out.size();
    for (std::size_t i = 0; i < order.size();) {
        const std::int64_t step = anomalies[order[i]].step;
        std::size_t end = i;
        bool detected = false;
        while (end < order.size() && anomalies[order[end]].step == step)
            detected |= chains_steps(anomalies[order[end++]]);
        const bool chains = out.size() > drifts && open_has_detected && detected && step <= out.back().last_step + 1;
        if (!chains) {
            out.emplace_back();
            out.back().first_step = step;
            open_has_detected = false;
        }
        Incident& inc = out.back();
        inc.last_step = step;
        open_has_detected |= detected;
        for (; i < end; ++i) inc.members.push_back(order[i]);
    }
    for (auto& inc : out) {
        for (auto m : inc.members) {
            inc.score = std::max(inc.score, anomalies[m].score);
            inc.ranks.push_back(anomalies[m].rank);
        }
        std::sort(inc.ranks.begin(), inc.ranks.end());
        inc.ranks.erase(std::unique(inc.ranks.begin(), inc.ranks.end()), inc.ranks.end());
        // Members are in training order: the origin is the first one severe enough to be the event itself.
        const auto origin = std::find_if(inc.members.begin(), inc.members.end(),
                                         [&](std::size_t m) { return anomalies[m].score >= inc.score / 2; });
        inc.origin = *origin;
        std::rotate(inc.members.begin(), origin, origin + 1);
    }
    std::stable_sort(out.begin(), out.end(), [](const Incident& a, const Incident& b) {
        if (a.score != b.score) return a.score > b.score;
        if (a.members.size() != b.members.size()) return a.members.size() > b.members.size();
        return a.first_step < b.first_step;
    });
    return out;
}

}  // namespace msmon
