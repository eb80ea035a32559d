// Timelines of runs per rank and format; restarts between them.
#include "core/layout/run_segments.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/layout/monitor_layout.hpp"

namespace msmon {

std::pair<std::int64_t, std::int64_t> run_order(const std::string& time_label, std::int64_t run_id) {
    return {time_label_order(time_label), run_id};
}

void order_segments(std::vector<RunSegment>& segments) {
    std::sort(segments.begin(), segments.end(), [](const RunSegment& a, const RunSegment& b) {
        return std::make_tuple(a.rank, a.format, run_order(a.time_label, a.run_id)) <
               std::make_tuple(b.rank, b.format, run_order(b.time_label, b.run_id));
    });
    for (std::size_t i = 0; i < segments.size(); ++i) {
        RunSegment& s = segments[i];
        s.retrained_from.reset();
        for (std::size_t j = i + 1; j < segments.size(); ++j) {
            const RunSegment& later = segments[j];
            if (later.rank != s.rank || later.format != s.format) break;
            if (later.first_step > s.last_step) continue;  // it carried on where this one stopped
            // Trained again from its first step (a later run that went back before this one began: all of it).
            const std::int64_t from = std::max(later.first_step, s.first_step);
            s.retrained_from = std::min(s.retrained_from.value_or(from), from);
        }
    }
}

std::vector<Restart> restarts_of(const std::vector<RunSegment>& ordered) {
    std::map<std::tuple<std::string, std::size_t, std::int64_t, std::int64_t>, Restart> groups;
    for (std::size_t i = 1; i < ordered.size(); ++i) {
        const RunSegment& before = ordered[i - 1];
        const RunSegment& s = ordered[i];
        if (before.rank != s.rank || before.format != s.format) continue;
        std::size_t ordinal = 1;
        for (std::size_t k = i - 1; k > 0 && ordered[k - 1].rank == s.rank && ordered[k - 1].format == s.format; --k)
            ++ordinal;
        Restart& r = groups[{s.format, ordinal, s.first_step, before.last_step}];
        if (r.ranks.empty() || time_label_order(s.time_label) < time_label_order(r.time_label))
            r.time_label = s.time_label;
        r.format = s.format;
        r.resumed_at = s.first_step;
        r.reached = before.last_step;
        r.ordinal = ordinal;
        r.ranks.push_back(s.rank);
    }
    std::vector<Restart> out;
    for (auto& [_, r] : groups) {
        std::sort(r.ranks.begin(), r.ranks.end());
        out.push_back(std::move(r));
    }
    std::sort(out.begin(), out.end(), [](const Restart& a, const Restart& b) {
        return std::make_tuple(a.ordinal, a.resumed_at, a.ranks) < std::make_tuple(b.ordinal, b.resumed_at, b.ranks);
    });
    return out;
}

std::vector<Restart> relaunches_from_events(const std::vector<EventRecord>& events) {
    std::map<std::int64_t, std::set<int>> by_step;
    for (const EventRecord& e : events)
        if (e.kind == "start" && e.step) by_step[*e.step].insert(e.rank);
    std::vector<Restart> out;
    std::size_t ordinal = 0;
    for (const auto& [step, ranks] : by_step) {
        Restart r;
        r.format = "mindformers";
        r.from_log = true;
        r.reached = step;
        r.resumed_at = step + 1;
        r.ranks.assign(ranks.begin(), ranks.end());
        r.ordinal = ++ordinal;
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<Restart> job_restarts(const std::vector<RunSegment>& ordered, const std::vector<EventRecord>& events) {
    std::vector<Restart> out;
    bool mindformers_runs = false;
    for (Restart& r : restarts_of(ordered)) {
        mindformers_runs = mindformers_runs || r.format == "mindformers";
        const bool seen = std::any_of(out.begin(), out.end(), [&](const Restart& o) {
            return std::tie(o.ordinal, o.resumed_at, o.reached, o.ranks) ==
                   std::tie(r.ordinal, r.resumed_at, r.reached, r.ranks);
        });
        if (!seen) out.push_back(std::move(r));
    }
    if (!mindformers_runs)
        for (Restart& r : relaunches_from_events(events)) out.push_back(std::move(r));
    return out;
}

std::optional<std::size_t> resumed_checkpoint(const Restart& r, const std::vector<CheckpointRecord>& checkpoints) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < checkpoints.size(); ++i)
        if (checkpoints[i].step <= r.resumed_at && (!best || checkpoints[i].step >= checkpoints[*best].step)) best = i;
    return best;
}

std::string rank_set_text(const std::vector<int>& ranks) {
    if (ranks.size() == 1) return "rank " + std::to_string(ranks.front());
    if (!ranks.empty() && ranks.back() - ranks.front() + 1 == static_cast<int>(ranks.size()))
        return "ranks " + std::to_string(ranks.front()) + "-" + std::to_string(ranks.back());
    return std::to_string(ranks.size()) + " ranks";
}

std::string describe_restart(const Restart& r, const std::vector<CheckpointRecord>& checkpoints) {
    const std::string who = rank_set_text(r.ranks);
    if (r.from_log)
        return "MindFormers relaunched after step " + std::to_string(r.reached) + " (" + who + ", from its log)";
    std::string text = "restart " + std::to_string(r.ordinal) + (r.time_label.empty() ? "" : " at " + r.time_label) +
                       ": " + who + " resumed at step " + std::to_string(r.resumed_at) + " after step " +
                       std::to_string(r.reached);
    if (r.resumed_at <= r.reached)
        text += " (steps " + std::to_string(r.resumed_at) + "-" + std::to_string(r.reached) + " trained twice)";
    else if (r.resumed_at > r.reached + 1)
        text += " (steps " + std::to_string(r.reached + 1) + "-" + std::to_string(r.resumed_at - 1) + " skipped)";
    if (const auto c = resumed_checkpoint(r, checkpoints))
        text += ", from checkpoint " + checkpoints[*c].name + " (step " + std::to_string(checkpoints[*c].step) +
                (checkpoints[*c].healthy ? ")" : ", UNHEALTHY)");
    else if (!checkpoints.empty()) text += ", no checkpoint recorded at or before step " + std::to_string(r.resumed_at);
    return text;
}

}  // namespace msmon
