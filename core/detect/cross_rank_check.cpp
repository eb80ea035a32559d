// Judgements across ranks (see the header): values wait per (group, step) until judged; beyond the memory budget
// the highest waiting steps are dropped from memory and read back from the store, in pieces, when judged.
#include "core/detect/cross_rank_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/detect/anomaly_builder.hpp"
#include "core/detect/layout_ops.hpp"
#include "core/detect/median.hpp"
#include "core/text/number_text.hpp"
#include "core/text/rank_ranges.hpp"

namespace msmon {

namespace {

constexpr std::int32_t kNoLayout = std::numeric_limits<std::int32_t>::min();
// What a held step costs beside its values, in values (a map node and a vector: ~96 bytes).
constexpr std::size_t kStepCost = 3;

// Kinds whose copies data-parallel replicas hold identically.
bool replicated_kind(const std::string& kind) {
    return kind == "param_origin" || kind == "param_updated" || kind == "grad_reduced" || kind == "exp_avg" ||
           kind == "exp_avg_sq";
}

}  // namespace

CrossRankCheck::CrossRankCheck(IngestStore& store, KeyRegistry& keys, const DetectorOptions& options,
                               std::function<void(const std::string&)> notice)
    : store_(store),
      keys_(keys),
      options_(options),
      notice_(std::move(notice)),
      budget_values_(options.cross_rank_memory_bytes / sizeof(Entry)) {}

CrossRankCheck::Group& CrossRankCheck::group_named(const std::string& kind, const std::string& op) {
    auto [it, added] = groups_.try_emplace(kind + ":" + op);
    if (added) {
        it->second.kind = kind;
        it->second.op = op;
        it->second.check = op == "replica"  ? Group::Check::replicas
                           : op == "update" ? Group::Check::updates
                                            : Group::Check::outliers;
        it->second.stored_kinds =
            op == "update" ? std::vector<std::string>{"param_origin", "param_updated"} : std::vector<std::string>{kind};
    }
    return it->second;
}

std::uint32_t CrossRankCheck::name_id(Group& g, const std::string& name) {
    auto [it, added] = g.name_ids.try_emplace(name, static_cast<std::uint32_t>(g.names.size()));
    if (added) {
        g.names.push_back(name);
        g.usual_spread.push_back(std::nan(""));
        if (g.steps_together()) g.orders.push_back(0);
        if (g.check == Group::Check::replicas) g.replica_series.emplace_back();
        if (g.check == Group::Check::updates) g.update_history.emplace_back();
    }
    return it->second;
}

const CrossRankCheck::Key& CrossRankCheck::key_of(const SampleRow& row, const TensorInfo& t, const RunInfo& run) {
    auto [it, added] = keys_by_tensor_.try_emplace(row.tensor_id);
    Key& k = it->second;
    if (added) k.layout_id = kNoLayout;
    if (k.layout_id == row.layout_id) return k;
    k = Key{};
    k.layout_id = row.layout_id;
    if (run.format == "mindformers") {
        if (t.kind != "loss" && t.kind != "global_norm") return k;
        k.outliers.group = &group_named(t.kind, "value");
        k.outliers.name = name_id(*k.outliers.group, t.name);
        return k;
    }
    const bool outliers = t.kind == "grad_reduced" || t.kind == "grad_unreduced", replicas = replicated_kind(t.kind);
    if (!outliers && !replicas) return k;
    const std::string* layout = keys_.layout_ops(row.layout_id);
    if (!layout) return k;
    const auto ops = numeric_ops(*layout);
    const auto slot_of = [&](const char* op) {
        const auto at = std::find(ops.begin(), ops.end(), op);
        return at == ops.end() ? -1 : static_cast<int>(at - ops.begin());
    };
    k.slot = slot_of("norm");
    if (k.slot < 0) return k;
    k.needs_count = true;
    k.min_slot = slot_of("min");
    k.max_slot = slot_of("max");
    const std::string series = t.vpp_stage + ":" + t.name + (t.micro_step ? ":" + std::to_string(*t.micro_step) : "");
    if (outliers) {
        k.outliers.group = &group_named(t.kind, "norm");
        k.outliers.name = name_id(*k.outliers.group, series);
    }
    if (replicas) {
        Group& g = group_named(t.kind, "replica");
        k.replicas = {&g, name_id(g, series)};
        g.orders[k.replicas.name] = t.ordinal;
    }
    if (t.kind == "param_origin" || t.kind == "param_updated") {
        Group& g = group_named("derived.update_ratio", "update");
        k.updates = {&g, name_id(g, series)};
        g.orders[k.updates.name] = t.ordinal;
        k.updated = t.kind == "param_updated";
    }
    return k;
}

CrossRankCheck::Entry CrossRankCheck::entry_of(const Key& k, const Target& target, const SampleRow& row,
                                               const RunInfo& run) const {
    Entry e{target.name, run.rank, static_cast<std::int32_t>(run.id), row.layout_id, kNoEvidence, row.values[k.slot]};
    if (target.group->check == Group::Check::replicas)
        e.digest = replica_digest(row.values, row.value_count, {k.min_slot, k.max_slot, k.slot});
    else if (target.group->check == Group::Check::updates) e.digest = k.updated ? 1 : 0;
    return e;
}

bool CrossRankCheck::is_spilled(const Group& g, std::int64_t step) const {
    auto it = g.spilled.upper_bound(step);
    if (it == g.spilled.begin()) return false;
    return step <= std::prev(it)->second;
}

void CrossRankCheck::collect(const SampleRow& row, const TensorInfo& t, const RunInfo& run) {
    if (run.format == "mindformers" && t.kind == "lr") {
        learning_rates_[row.step] = row.values[0];
        while (learning_rates_.size() > 256) learning_rates_.erase(learning_rates_.begin());
        return;
    }
    const Key& k = key_of(row, t, run);
    if (k.needs_count && k.slot >= row.value_count) return;
    for (const Target* target : {&k.outliers, &k.replicas, &k.updates}) {
        if (!target->group) continue;
        Group& g = *target->group;
        auto [latest, first] = g.latest.try_emplace(run.rank, row.step);
        if (first || row.step > latest->second) {
            latest->second = std::max(latest->second, row.step);
            changed_ = true;
        }
        // Replicas: a step already judged was judged against every copy that had come; this one came late.
        if (g.steps_together() && row.step < g.judged_below) continue;
        if (is_spilled(g, row.step)) continue;  // in the store by the time its step is judged
        if (g.steps_together()) note_run(run);
        hold(g, row.step, entry_of(k, *target, row, run));
    }
}

void CrossRankCheck::collect_late(const SampleRow& row, const TensorInfo& t, const RunInfo& run) {
    if (run.format == "mindformers" && t.kind == "lr") return;
    const Key& k = key_of(row, t, run);
    if (k.needs_count && k.slot >= row.value_count) return;
    for (const Target* target : {&k.outliers, &k.replicas, &k.updates}) {
        if (!target->group) continue;
        if (target->group->steps_together()) note_run(run);
        late_[target->group].push_back(entry_of(k, *target, row, run));
    }
}

void CrossRankCheck::judge_late(std::int64_t step, const std::vector<int>& late_ranks, RecordBatch& batch) {
    std::vector<int> only = late_ranks;
    std::sort(only.begin(), only.end());
    for (auto& [_, g] : groups_) {
        const auto it = late_.find(&g);
        if (it == late_.end()) continue;
        const auto judged_below = g.judged_below;
        judge(g, step, it->second, batch, &only);
        g.judged_below = judged_below;
    }
    late_.clear();
}

void CrossRankCheck::hold(Group& g, std::int64_t step, const Entry& e) {
    auto [held, added] = g.held.try_emplace(step);
    if (added) {
        changed_ = true;
        held_values_ += kStepCost;
    }
    held->second.push_back(e);
    g.values_per_step = std::max(g.values_per_step, held->second.size());
    peak_values_ = std::max(peak_values_, ++held_values_);
    if (held_values_ > budget_values_) spill_until_within_budget();
}

void CrossRankCheck::spill_step(Group& g, std::int64_t step) {
    auto held = g.held.find(step);
    held_values_ -= held->second.size() + kStepCost;
    g.held.erase(held);
    std::int64_t first = step, last = step;
    if (step < std::numeric_limits<std::int64_t>::max()) {
        if (auto next = g.spilled.find(step + 1); next != g.spilled.end()) {
            last = next->second;
            g.spilled.erase(next);
        }
    }
    if (auto prev = g.spilled.upper_bound(step);
        prev != g.spilled.begin() && step > std::numeric_limits<std::int64_t>::min()) {
        --prev;
        if (prev->second == step - 1) first = prev->first;
    }
    g.spilled[first] = last;
}

void CrossRankCheck::spill_until_within_budget() {
    // Down to half the budget, so that spilling is not paid per row; the highest steps go first: they are the
    // ones judged last.
    while (held_values_ > budget_values_ / 2) {
        Group* fullest = nullptr;
        std::size_t most = 0;
        for (auto& [_, g] : groups_) {
            std::size_t n = 0;
            for (const auto& [step, entries] : g.held) n += entries.size();
            if (n > most) most = n, fullest = &g;
        }
        if (!fullest) return;
        // A few steps per pass: counting is per pass.
        for (int i = 0; i < 64 && !fullest->held.empty() && held_values_ > budget_values_ / 2; ++i)
            spill_step(*fullest, std::prev(fullest->held.end())->first);
    }
}

void CrossRankCheck::evaluate(bool all, RecordBatch& batch) {
    waited_ = false;
    for (auto& [_, g] : groups_) {
        // A step is due once `needed` ranks have passed it: every step below the needed-th highest latest step.
        std::optional<std::int64_t> below;
        if (!all) {
            // Outliers: once 3 of 4 ranks (at least cross_rank_min_ranks) passed a step. Replicas: once every rank
            // passed it, or the 3 of 4 are kReplicaLag steps beyond it.
            const std::size_t least = g.steps_together() ? 2 : static_cast<std::size_t>(options_.cross_rank_min_ranks);
            const std::size_t needed = std::max<std::size_t>(least, (g.latest.size() * 3 + 3) / 4);
            if (g.latest.size() < needed) continue;
            std::vector<std::int64_t> steps;
            for (const auto& [rank, s] : g.latest) steps.push_back(s);
            std::nth_element(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(needed - 1), steps.end(),
                             std::greater<>());
            below = steps[needed - 1];
            if (g.steps_together()) {
                const std::int64_t slowest = *std::min_element(steps.begin(), steps.end());
                const bool far = *below > std::numeric_limits<std::int64_t>::min() + kReplicaLag;
                below = std::max(slowest, far ? *below - kReplicaLag : slowest);
            }
        }
        judge_below(g, below, batch);
    }
}

void CrossRankCheck::evaluate_through(std::int64_t step, RecordBatch& batch) {
    waited_ = false;
    const std::optional<std::int64_t> below =
        step < std::numeric_limits<std::int64_t>::max() ? std::optional(step + 1) : std::nullopt;
    for (auto& [_, g] : groups_) judge_below(g, below, batch);
}

void CrossRankCheck::judge_below(Group& g, std::optional<std::int64_t> below, RecordBatch& batch) {
    const auto due = [&](std::int64_t step) { return !below || step < *below; };
    // Held steps and spilled ranges never overlap; judged in step order (each series' usual spread moves on).
    auto held = g.held.begin();
    auto spilled = g.spilled.begin();
    while (true) {
        if (held != g.held.end() && (spilled == g.spilled.end() || held->first < spilled->first)) {
            if (!due(held->first)) break;
            judge(g, held->first, held->second, batch);
            held_values_ -= held->second.size() + kStepCost;
            held = g.held.erase(held);
            changed_ = true;
            continue;
        }
        if (spilled == g.spilled.end() || !due(spilled->first)) break;
        const std::int64_t first = spilled->first, last = spilled->second;
        const std::int64_t due_last = below ? std::min(last, *below - 1) : last;
        judge_spilled(g, first, due_last, batch);
        spilled = g.spilled.erase(spilled);
        changed_ = true;
        if (due_last < last) {
            g.spilled[due_last + 1] = last;
            break;
        }
    }
}

void CrossRankCheck::judge_spilled(Group& g, std::int64_t first, std::int64_t last, RecordBatch& batch) {
    if (!waited_) {
        if (wait_committed_) wait_committed_();
        waited_ = true;
    }
    std::unordered_map<std::int32_t, std::int32_t> value_counts;  // layout → numeric ops
    const std::size_t row_bytes = sizeof(StoredSample) + sizeof(Entry);
    for (std::int64_t a = first;;) {
        // As many steps as fit the budget at the most values seen per step (one step if none seen yet).
        const std::size_t per_step = g.values_per_step ? g.values_per_step : std::numeric_limits<std::size_t>::max();
        const std::uint64_t steps = std::max<std::uint64_t>(1, options_.cross_rank_memory_bytes / row_bytes / per_step);
        const std::uint64_t left = static_cast<std::uint64_t>(last) - static_cast<std::uint64_t>(a);
        const std::int64_t b = left < steps ? last : a + static_cast<std::int64_t>(steps - 1);
        // Each stored row becomes entries as it is read (32 bytes a value against a row's ~110): the rows are never
        // held together (a kind's rows of a span were 44 MB at the 64-rank backlog's peak).
        std::map<std::int64_t, std::vector<Entry>> values;
        for (const auto& kind : g.stored_kinds)
            store_.visit_samples(kind, a, b, [&](StoredSample& stored) {
                if (runs_loaded_.insert(stored.run_id).second) keys_.load_run_tensors(stored.run_id);
                const TensorInfo* t = keys_.tensor(stored.row.tensor_id);
                const RunInfo* run = t ? keys_.run(t->run_id) : nullptr;
                if (!t || !run) return;
                auto [count, added] = value_counts.try_emplace(stored.row.layout_id, 0);
                if (added) {
                    const std::string* layout = keys_.layout_ops(stored.row.layout_id);
                    count->second = layout ? static_cast<std::int32_t>(
                                                 std::min<std::size_t>(numeric_ops(*layout).size(), kMaxNumericOps))
                                           : 0;
                }
                stored.row.value_count = count->second;
                const Key& k = key_of(stored.row, *t, *run);
                const Target& target = k.replicas.group == &g  ? k.replicas
                                       : k.updates.group == &g ? k.updates
                                                               : k.outliers;
                if (target.group != &g || (k.needs_count && k.slot >= stored.row.value_count)) return;
                if (g.steps_together()) note_run(*run);
                values[stored.row.step].push_back(entry_of(k, target, stored.row, *run));
            });
        for (auto& [step, entries] : values) {
            g.values_per_step = std::max(g.values_per_step, entries.size());
            judge(g, step, entries, batch);
        }
        if (b == last) break;
        a = b + 1;
    }
}

void CrossRankCheck::judge(Group& g, std::int64_t step, std::vector<Entry>& entries, RecordBatch& batch,
                           const std::vector<int>* only) {
    switch (g.check) {
        case Group::Check::outliers:
            judge_outliers(g, step, entries, batch, only);
            return;
        case Group::Check::replicas:
            judge_replicas(g, step, entries, batch, only);
            break;
        case Group::Check::updates:
            judge_updates(g, step, entries, batch, only);
            break;
    }
    g.judged_below = std::max(g.judged_below, step < std::numeric_limits<std::int64_t>::max() ? step + 1 : step);
}

CrossRankCheck::ReplicaSummary CrossRankCheck::replica_summary() const {
    ReplicaSummary out;
    std::unordered_set<std::string> tensors;
    for (const auto& [_, g] : groups_) {
        if (g.check != Group::Check::replicas) continue;
        for (std::size_t i = 0; i < g.replica_series.size(); ++i) {
            const ReplicaSeries& r = g.replica_series[i];
            if (!r.groups()) continue;
            ++out.series;
            tensors.insert(g.names[i]);
            out.largest = std::max(out.largest, r.largest());
        }
    }
    out.tensors = tensors.size();
    return out;
}

std::optional<std::string> CrossRankCheck::take_changed_state() {
    if (!changed_) return std::nullopt;
    changed_ = false;
    nlohmann::json groups = nlohmann::json::object();
    for (const auto& [name, g] : groups_) {
        nlohmann::json latest = nlohmann::json::array();
        for (const auto& [rank, step] : g.latest) latest.push_back({rank, step});
        // Waiting steps as [first, last] runs of consecutive steps, held or spilled alike: a catch-up holds
        // thousands.
        std::vector<std::pair<std::int64_t, std::int64_t>> runs;
        const auto add = [&](std::int64_t first, std::int64_t last) {
            if (!runs.empty() && runs.back().second < first && runs.back().second + 1 == first)
                runs.back().second = last;
            else runs.emplace_back(first, last);
        };
        auto held = g.held.begin();
        auto spilled = g.spilled.begin();
        while (held != g.held.end() || spilled != g.spilled.end()) {
            if (held != g.held.end() && (spilled == g.spilled.end() || held->first < spilled->first)) {
                add(held->first, held->first);
                ++held;
            } else {
                add(spilled->first, spilled->second);
                ++spilled;
            }
        }
        nlohmann::json pending = nlohmann::json::array();
        for (const auto& [first, last] : runs) pending.push_back({first, last});
        groups[name]["latest"] = std::move(latest);
        groups[name]["pending"] = std::move(pending);
    }
    return groups.dump();
}

void CrossRankCheck::restore(const std::string& text) {
    try {
        const auto saved = nlohmann::json::parse(text);
        for (const auto& [name, s] : saved.items()) {
            const auto colon = name.find(':');
            if (colon == std::string::npos) continue;
            Group& g = group_named(name.substr(0, colon), name.substr(colon + 1));
            for (const auto& rs : s.at("latest")) g.latest[rs.at(0).get<int>()] = rs.at(1).get<std::int64_t>();
            // The waiting steps' values are the stored rows of those steps (stored in the same transactions as
            // the state that names them): read back when judged.
            for (const auto& range : s.at("pending")) {
                const auto first = range.at(0).get<std::int64_t>(), last = range.at(1).get<std::int64_t>();
                if (first <= last) g.spilled[first] = last;
            }
        }
    } catch (const nlohmann::json::exception& e) {
        notice_(std::string("saved cross-rank state is unreadable, starting afresh: ") + e.what());
        groups_.clear();
    }
}

}  // namespace msmon
