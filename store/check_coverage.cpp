// Replica groups and the checks that can't run, from a store (see the header).
#include "store/check_coverage.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "core/detect/replica_series.hpp"
#include "core/steps_list.hpp"

namespace msmon {

namespace {

constexpr const char* kReplicaKinds[] = {"param_origin", "grad_reduced", "exp_avg", "exp_avg_sq", "param_updated"};

// One kind's copies at the steps looked at: (series, step) → rank → the row's values in the catalog's op order.
struct Copies {
    std::map<std::string, std::map<std::int64_t, std::map<int, std::pair<std::int64_t, std::vector<double>>>>> rows;
    std::set<std::int64_t> steps;
};

// `largest` gets each grouped tensor's largest group (by its name, over kinds).
ReplicaKindCoverage cover_kind(Reader& reader, const std::string& kind, const std::vector<std::string>& ops,
                               const std::vector<std::int64_t>& latest, std::vector<std::int64_t>& steps_used,
                               std::map<std::string, int>& largest,
                               std::map<int, std::pair<std::string, std::vector<std::vector<int>>>>& examples) {
    ReplicaKindCoverage out;
    out.kind = kind;
    if (latest.empty()) return out;
    std::string error;
    PointFilter f;
    f.kind = kind;
    f.steps = StepList::parse(std::to_string(latest.front()) + "-" + std::to_string(latest.back()), error);
    Copies c;
    reader.points(f, [&](const Point& p) {
        if (p.is_text) return;
        const auto slot = std::find(ops.begin(), ops.end(), p.op);
        if (slot == ops.end()) return;
        std::string series = std::string(p.vpp_stage) + ":" + std::string(p.name) +
                             (p.micro_step ? ":" + std::to_string(*p.micro_step) : "");
        auto& [run, values] = c.rows[std::move(series)][p.step][p.rank];
        if (values.empty()) values.assign(ops.size(), std::nan(""));
        run = p.run_id;
        values[static_cast<std::size_t>(slot - ops.begin())] = p.value;
        c.steps.insert(p.step);
    });
    // The latest kReplicaLearnSteps steps this kind has, judged in order as the detector would.
    std::vector<std::int64_t> steps(c.steps.begin(), c.steps.end());
    if (steps.size() > static_cast<std::size_t>(kReplicaLearnSteps))
        steps.erase(steps.begin(), steps.end() - kReplicaLearnSteps);
    if (steps.size() > steps_used.size()) steps_used = steps;
    const auto slot_of = [&](const char* op) {
        const auto at = std::find(ops.begin(), ops.end(), op);
        return at == ops.end() ? -1 : static_cast<int>(at - ops.begin());
    };
    const ReplicaSlots slots{slot_of("min"), slot_of("max"), slot_of("norm")};
    std::map<int, std::size_t> sizes;  // a tensor's largest group → how many tensors
    for (const auto& [series, by_step] : c.rows) {
        ++out.tensors;
        ReplicaSeries learned;
        for (std::int64_t step : steps) {
            const auto at = by_step.find(step);
            if (at == by_step.end()) continue;
            std::vector<ReplicaCopy> copies;
            for (const auto& [rank, row] : at->second) {
                copies.push_back({rank, row.first, 0,
                                  replica_digest(row.second.data(), static_cast<int>(row.second.size()), slots), 0, 0});
            }
            learned.judge(copies);
        }
        if (!learned.groups()) continue;
        ++out.grouped;
        if (!examples.count(learned.largest()))  // the first tensor grouped this way
            examples[learned.largest()] = {kind + " " + series.substr(series.find(':') + 1), learned.members()};
        ++sizes[learned.largest()];
        const std::string name = series.substr(series.find(':') + 1);
        largest[name] = std::max(largest[name], learned.largest());
    }
    for (const auto& [size, n] : sizes)
        if (!out.group_size || n > sizes[out.group_size]) out.group_size = size;
    return out;
}

}  // namespace

std::string CheckCoverage::summary() const {
    if (!grouped_tensors) return "";
    return std::to_string(group_size) + " replicas of " + std::to_string(grouped_tensors) + " tensors" +
           (sizes_differ ? " (most; groups of other sizes too)" : "");
}

CheckCoverage check_coverage(Reader& reader, const CheckCoverage* previous) {
    std::vector<std::int64_t> latest = reader.collected_steps(kReplicaLearnSteps);
    std::sort(latest.begin(), latest.end());
    if (previous && !latest.empty() && previous->looked_at == latest) return *previous;
    CheckCoverage out;
    out.looked_at = latest;
    const StoreCatalog cat = reader.catalog();
    std::map<std::string, std::vector<std::string>> ops_of(cat.kinds.begin(), cat.kinds.end());
    // msprobe's statistics at all? A MindFormers-only store has nothing for these checks to look at.
    bool msprobe = false;
    for (const auto& [kind, _] : cat.kinds)
        msprobe |= kind == "actv" || kind == "actv_grad" || kind == "grad_unreduced" || kind == "grad_reduced" ||
                   kind.starts_with("param_") || kind.starts_with("exp_avg");
    if (!msprobe) return out;
    std::map<std::string, int> largest;
    std::map<int, std::pair<std::string, std::vector<std::vector<int>>>> examples;  // largest group → a tensor's
    for (const char* kind : kReplicaKinds) {
        const auto ops = ops_of.find(kind);
        if (ops == ops_of.end()) continue;
        out.replicas.push_back(cover_kind(reader, kind, ops->second, latest, out.steps, largest, examples));
    }
    std::map<int, std::size_t> tensors_by_size;
    for (const auto& [_, size] : largest) ++tensors_by_size[size];
    for (const auto& [size, n] : tensors_by_size)
        if (!out.group_size || n > tensors_by_size[out.group_size]) out.group_size = size;
    out.grouped_tensors = largest.size();
    if (const auto example = examples.find(out.group_size); example != examples.end()) {
        out.example_tensor = example->second.first;
        out.example_groups = example->second.second;
    }
    out.sizes_differ = tensors_by_size.size() > 1;
    const auto has = [&](const char* kind) { return ops_of.count(kind) > 0; };
    const auto coverage = [&](const char* kind) -> const ReplicaKindCoverage* {
        for (const auto& k : out.replicas)
            if (k.kind == kind) return &k;
        return nullptr;
    };
    if (!has("param_origin") || !has("param_updated"))
        out.cannot_run.push_back(
            "continuity and optimizer-step checks can't run: no weights collected (param_origin and param_updated; "
            "set \"param_distribution\": true in the monitor config)");
    if (out.replicas.empty()) {
        out.cannot_run.push_back(
            "replica check can't run: none of param_origin, param_updated, grad_reduced, exp_avg, exp_avg_sq "
            "collected (param_distribution, wg_distribution, mv_distribution in the monitor config)");
    } else if (cat.ranks.size() < 2) {
        out.cannot_run.push_back("replica check can't run: one rank here, no replica beside it");
    } else if (out.steps.size() < static_cast<std::size_t>(kReplicaLearnSteps)) {
        out.cannot_run.push_back("replica groups not learned yet: " + std::to_string(kReplicaLearnSteps) +
                                 " collected steps are needed, " + std::to_string(out.steps.size()) + " so far");
    } else {
        if (out.summary().empty()) {
            out.cannot_run.push_back(
                "replica check finds no replicas: no two ranks printed the same values (tensor- or "
                "pipeline-parallel shards, one rank per data-parallel group on this node, msprobe's "
                "dp_group/tp_group keeping one replica's gradients, or a distributed optimizer's shards)");
        } else {
            if (const auto* g = coverage("grad_reduced"); g && g->tensors && !g->grouped)
                out.cannot_run.push_back(
                    "replica check of reduced gradients can't run: no two ranks hold the same reduced gradient "
                    "(msprobe's dp_group/tp_group keep one replica's gradients; a distributed optimizer shards "
                    "them)");
            const auto* m = coverage("exp_avg");
            if (!m) m = coverage("exp_avg_sq");
            if (m && m->tensors && !m->grouped)
                out.cannot_run.push_back(
                    "replica check of the optimizer's moments can't run: no two ranks hold the same moments (ZeRO "
                    "or a distributed optimizer shards them)");
        }
    }
    return out;
}

}  // namespace msmon
