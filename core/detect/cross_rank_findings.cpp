// What each judgement across ranks finds and how it says it: a rank far from the others (CrossRankOutlier), a
// replica departing from its twins or tied with them (ReplicaDivergence, ReplicaTie), and the optimizer's step
// changing on every rank at once (OptimizerStep). cross_rank_check.cpp holds the values and decides when to judge.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/detect/anomaly_builder.hpp"
#include "core/detect/cross_rank_check.hpp"
#include "core/detect/median.hpp"
#include "core/text/number_text.hpp"
#include "core/text/rank_ranges.hpp"

namespace msmon {

void CrossRankCheck::judge_outliers(Group& g, std::int64_t step, std::vector<Entry>& entries, RecordBatch& batch,
                                    const std::vector<int>* only) {
    const auto mine = [only](int rank) { return !only || std::binary_search(only->begin(), only->end(), rank); };
    // By series, then rank; a value read twice (a file read again) counts once, as its last reading.
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return a.name != b.name ? a.name < b.name : a.rank < b.rank;
    });
    struct Series {
        std::uint32_t name;
        std::size_t begin, end;
    };
    std::vector<Series> series;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (i + 1 < entries.size() && entries[i + 1].name == entries[i].name && entries[i + 1].rank == entries[i].rank)
            continue;
        if (series.empty() || series.back().name != entries[i].name) series.push_back({entries[i].name, kept, kept});
        entries[kept++] = entries[i];
        series.back().end = kept;
    }
    // Series in name order: the worst series of a rank is the first of equal deviations.
    std::sort(series.begin(), series.end(),
              [&](const Series& a, const Series& b) { return g.names[a.name] < g.names[b.name]; });
    struct Worst {
        int flagged = 0, compared = 0;
        double rel = -1, value = 0, median = 0;
        std::uint32_t name = 0;
    };
    std::map<int, Worst> per_rank;
    std::size_t ranks_in_group = 0;
    std::vector<double> ys;
    std::vector<std::pair<std::size_t, double>> logs;  // entry, log|value|
    for (const Series& s : series) {
        ranks_in_group = std::max(ranks_in_group, s.end - s.begin);
        // On log|x|: norms spread by factors, not by amounts. Non-finite values are the NonFinite check's.
        logs.clear();
        for (std::size_t i = s.begin; i < s.end; ++i)
            if (std::isfinite(entries[i].value) && entries[i].value != 0)
                logs.emplace_back(i, std::log(std::abs(entries[i].value)));
        if (static_cast<int>(logs.size()) < options_.cross_rank_min_ranks) continue;
        ys.clear();
        for (const auto& [r, y] : logs) ys.push_back(y);
        const double med = median_of(ys);
        for (auto& y : ys) y = std::abs(y - med);
        const double mad = median_of(ys) * 1.4826;
        double& usual = g.usual_spread[s.name];
        const bool fresh = std::isnan(usual);
        const double spread = std::max({mad, fresh ? mad : usual, 0.05});
        if (!only) usual = fresh ? mad : 0.9 * usual + 0.1 * mad;  // a late rank's step moved it already
        for (const auto& [i, y] : logs) {
            if (!mine(entries[i].rank)) continue;
            Worst& w = per_rank[entries[i].rank];
            ++w.compared;
            const double d = std::abs(y - med);
            if (d < std::log(options_.cross_rank_min_ratio) || d < options_.cross_rank_mad_k * spread) continue;
            ++w.flagged;
            if (d > w.rel) {
                w.rel = d;
                w.value = entries[i].value;
                w.median = std::exp(med) * (w.value < 0 ? -1 : 1);
                w.name = s.name;
            }
        }
    }
    for (const auto& [r, w] : per_rank) {
        if (!w.flagged) continue;
        const std::string& series_name = g.names[w.name];
        AnomalyAt at{.rank = r,
                     .step = step,
                     .kind = g.kind,
                     .name = series_name,
                     .op = g.op,
                     .value = w.value,
                     .reference = w.median};
        if (const auto c = at.name.find(':'); at.op == "norm" && c != std::string::npos) {
            at.vpp_stage = at.name.substr(0, c);
            at.name = at.name.substr(c + 1);
        }
        std::string message = "rank " + std::to_string(r) + ": " + g.kind + " " + g.op + " far from the other " +
                              std::to_string(ranks_in_group - 1) + " ranks at step " + std::to_string(step) + " on " +
                              std::to_string(w.flagged) + " of " + std::to_string(w.compared) + " series (worst " +
                              (series_name.empty() ? g.kind : series_name) + ": " + format_short(w.value) +
                              " vs median " + format_short(w.median) + ")";
        auto a = detected_anomaly(Rule::CrossRankOutlier, std::move(at), std::move(message));
        batch.anomalies.push_back(std::move(a));
    }
}

namespace {

// "+50.0%": how far `value` is from `reference`.
std::string relative_text(double value, double reference) {
    if (reference == 0 || !std::isfinite(value) || !std::isfinite(reference)) return "";
    const double percent = (value - reference) / std::abs(reference) * 100;
    char buf[32];
    std::snprintf(buf, sizeof buf, std::abs(percent) >= 0.01 ? "%+.2f%%" : "%+.2g%%", percent);
    return buf;
}

std::string ranks_text(const std::vector<int>& ranks) {
    return (ranks.size() == 1 ? "rank " : "ranks ") + rank_ranges(ranks);
}

}  // namespace

void CrossRankCheck::note_run(const RunInfo& run) {
    auto& runs = launches_[run.rank];
    const std::pair<std::string, std::int32_t> key{run.time_label, static_cast<std::int32_t>(run.id)};
    const auto at = std::lower_bound(runs.begin(), runs.end(), key);
    if (at != runs.end() && *at == key) return;
    runs.insert(at, key);
    launch_cache_.clear();  // indices after it moved
}

int CrossRankCheck::launch_of(std::int32_t run) {
    if (const auto hit = launch_cache_.find(run); hit != launch_cache_.end()) return hit->second;
    int index = 0;
    if (const RunInfo* info = keys_.run(run)) {
        const auto& runs = launches_[info->rank];
        const auto at = std::lower_bound(runs.begin(), runs.end(), std::make_pair(info->time_label, run));
        index = static_cast<int>(at - runs.begin());
    }
    launch_cache_[run] = index;
    return index;
}

std::vector<std::size_t> CrossRankCheck::latest_launch(const std::vector<Entry>& entries, std::size_t begin,
                                                       std::size_t end) {
    std::vector<std::size_t> chosen;  // per rank: its latest launch's copy, the last reading of it
    std::vector<int> launches;
    for (std::size_t i = begin; i < end; ++i) {
        const int launch = launch_of(entries[i].run);
        if (!chosen.empty() && entries[chosen.back()].rank == entries[i].rank) {
            if (launch >= launches.back()) chosen.back() = i, launches.back() = launch;
            continue;
        }
        chosen.push_back(i);
        launches.push_back(launch);
    }
    const int latest = launches.empty() ? 0 : *std::max_element(launches.begin(), launches.end());
    std::vector<std::size_t> out;
    for (std::size_t k = 0; k < chosen.size(); ++k)
        if (launches[k] == latest) out.push_back(chosen[k]);
    return out;
}

void CrossRankCheck::judge_replicas(Group& g, std::int64_t step, std::vector<Entry>& entries, RecordBatch& batch,
                                    const std::vector<int>* only) {
    // By series, then rank; a value read twice (a file read again) counts once, as its last reading.
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return a.name != b.name ? a.name < b.name : a.rank < b.rank;
    });
    ReplicaFindings per_rank;
    std::vector<ReplicaCopy> copies;
    for (std::size_t i = 0; i < entries.size();) {
        const std::uint32_t name = entries[i].name;
        const std::size_t begin = i;
        while (i < entries.size() && entries[i].name == name) ++i;
        copies.clear();
        for (std::size_t k : latest_launch(entries, begin, i)) {
            const Entry& e = entries[k];
            copies.push_back({e.rank, e.run, e.layout, e.digest, e.value, name});
        }
        for (auto& f : g.replica_series[name].judge(copies, only, step, replica_hold_))
            add_replica_finding(g, step, name, std::move(f), per_rank);
    }
    replica_records(g, per_rank, batch);
}

void CrossRankCheck::release_held(RecordBatch& batch) {
    for (auto& [_, g] : groups_) {
        ReplicaFindings per_rank;
        for (std::size_t name = 0; name < g.replica_series.size(); ++name) {
            if (!g.replica_series[name].holds()) continue;
            for (auto& f : g.replica_series[name].release())
                add_replica_finding(g, f.step, static_cast<std::uint32_t>(name), std::move(f), per_rank);
        }
        replica_records(g, per_rank, batch);
    }
}

void CrossRankCheck::add_replica_finding(const Group& g, std::int64_t step, std::uint32_t name, ReplicaFinding f,
                                         ReplicaFindings& out) const {
    if (f.step != kReplicaNoStep) step = f.step;  // a held tie, reported later
    PerRank& p = out[{step, f.tie, f.rank}];
    if (!p.count++ || g.orders[name] < g.orders[p.name]) {
        p.name = name;
        p.first = std::move(f);
    }
}

void CrossRankCheck::replica_records(const Group& g, ReplicaFindings& findings, RecordBatch& batch) const {
    for (auto& [key, p] : findings) {
        const ReplicaFinding& f = p.first;
        const std::int64_t step = std::get<0>(key);
        const std::string& series = g.names[p.name];
        const auto colon = series.find(':');
        AnomalyAt at{.rank = f.rank,
                     .step = step,
                     .kind = g.kind,
                     .vpp_stage = colon == std::string::npos ? "" : series.substr(0, colon),
                     .name = colon == std::string::npos ? series : series.substr(colon + 1),
                     .op = "norm",
                     .value = f.value,
                     .reference = f.group_value,
                     .call_id = g.orders[p.name],
                     .group_mates = f.others};
        const std::string more =
            p.count > 1 ? "; " + std::to_string(p.count - 1) + " more " + g.kind + " tensors of this rank too" : "";
        const std::string diff =
            f.value == f.group_value ? "the same norm, other statistics differ" : relative_text(f.value, f.group_value);
        const auto [value_text, group_text] = format_apart(f.value, f.group_value);
        std::string message;
        if (!f.tie) {
            message = "rank " + std::to_string(f.rank) + "'s " + g.kind + " departs from its " +
                      std::to_string(f.others.size()) + " replica" + (f.others.size() == 1 ? "" : "s") + " (" +
                      ranks_text(f.others) + ") at step " + std::to_string(step) + ": " + at.name + " norm " +
                      value_text + " against their " + group_text + " (" + diff + ")" + more;
        } else {
            message = ranks_text(f.side) + " and " + ranks_text(f.others) + ", replicas of " + at.name + " (" + g.kind +
                      "), disagree at step " + std::to_string(step) + ": norm " + value_text + " on " +
                      ranks_text(f.side) + ", " + group_text + " on " + ranks_text(f.others) + " (" + diff +
                      "); no value holds a majority, so which copy changed can't be told from the replicas alone" +
                      more;
        }
        auto a =
            detected_anomaly(f.tie ? Rule::ReplicaTie : Rule::ReplicaDivergence, std::move(at), std::move(message));
        batch.anomalies.push_back(std::move(a));
    }
}

void CrossRankCheck::judge_updates(Group& g, std::int64_t step, std::vector<Entry>& entries, RecordBatch& batch,
                                   const std::vector<int>* only) {
    const auto mine = [only](int rank) { return !only || std::binary_search(only->begin(), only->end(), rank); };
    // By series, rank and side (origin, then updated); the last reading of each counts.
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return std::tie(a.name, a.rank, a.digest) < std::tie(b.name, b.rank, b.digest);
    });
    std::map<int, RankUpdateTally> by_rank;
    for (std::size_t i = 0; i < entries.size();) {
        const Entry& first = entries[i];
        const std::size_t begin = i;
        int latest = 0;  // both norms from the latest launch that wrote this step (a relaunch trains it again)
        for (; i < entries.size() && entries[i].name == first.name && entries[i].rank == first.rank; ++i)
            latest = std::max(latest, launch_of(entries[i].run));
        std::optional<double> origin, updated;
        for (std::size_t k = begin; k < i; ++k)
            if (launch_of(entries[k].run) == latest) (entries[k].digest ? updated : origin) = entries[k].value;
        if (!origin || !updated) continue;
        const auto ratio = update_ratio(*origin, *updated);
        if (!ratio || !mine(first.rank)) continue;
        auto& by_rank_history = g.update_history[first.name];
        if (first.rank < 0 || first.rank >= (1 << 20)) continue;
        if (static_cast<std::size_t>(first.rank) >= by_rank_history.size())
            by_rank_history.resize(static_cast<std::size_t>(first.rank) + 1);
        const UpdateHistory::Verdict v = by_rank_history[static_cast<std::size_t>(first.rank)].add(*ratio);
        RankUpdateTally& t = by_rank[first.rank];
        t.rank = first.rank;
        if (!v.judged) continue;
        ++t.judged;
        if (!v.jumped) continue;
        ++t.jumped;
        t.factors.push_back(*ratio / v.median);
        if (!t.has_first || g.orders[first.name] < t.first_order) {
            t.has_first = true;
            t.first_order = g.orders[first.name];
            t.first_name = first.name;
            t.first_ratio = *ratio;
            t.first_median = v.median;
        }
    }
    if (only) return;  // late ranks: their histories moved on; the optimizer's step was judged on time
    std::vector<RankUpdateTally> tallies;
    for (auto& [_, t] : by_rank) tallies.push_back(std::move(t));
    std::size_t judging = 0;
    for (const auto& t : tallies) judging += t.judged > 0;
    const auto jumped = optimizer_jump(tallies, g.update_open);
    for (const RankUpdateTally* t : jumped) {
        const std::string& series = g.names[t->first_name];
        const auto colon = series.find(':');
        AnomalyAt at{.rank = t->rank,
                     .step = step,
                     .kind = g.kind,
                     .vpp_stage = colon == std::string::npos ? "" : series.substr(0, colon),
                     .name = colon == std::string::npos ? series : series.substr(colon + 1),
                     .op = "ratio",
                     .value = t->first_ratio,
                     .reference = t->first_median,
                     .call_id = t->first_order,
                     .tag_name = "optimizer/rank" + std::to_string(t->rank)};
        std::vector<double> factors = t->factors;
        const double typical = median_of(factors);
        std::string message = "the optimizer's step grew at step " + std::to_string(step) + " on " +
                              std::to_string(jumped.size()) + " of " + std::to_string(judging) + " ranks: on rank " +
                              std::to_string(t->rank) + " the update/weight ratio of " + std::to_string(t->jumped) +
                              " of " + std::to_string(t->judged) + " weights jumped, ×" + format_short(typical) +
                              " their recent medians (" + at.name + ": " + format_short(t->first_ratio) + " against " +
                              format_short(t->first_median) +
                              "). Every layer at once: the learning rate, its schedule, the loss scale or the "
                              "optimizer's state changed" +
                              learning_rate_text(step);
        auto a = detected_anomaly(Rule::OptimizerStep, std::move(at), std::move(message));
        batch.anomalies.push_back(std::move(a));
    }
}

std::string CrossRankCheck::learning_rate_text(std::int64_t step) const {
    const auto at = learning_rates_.find(step);
    if (at == learning_rates_.end()) return "";
    if (at == learning_rates_.begin()) return " (MindFormers logged lr " + format_short(at->second) + " at this step)";
    const auto [now, before] = format_apart(at->second, std::prev(at)->second);
    std::string out = " (MindFormers logged lr " + now + " at this step";
    out += ", " + before + " at step " + std::to_string(std::prev(at)->first);
    return out + ")";
}

}  // namespace msmon
