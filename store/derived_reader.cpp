#include "store/derived_reader.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <unordered_map>

#include "core/detect/update_steps.hpp"
#include "core/series/op_aggregate.hpp"
#include "core/steps_list.hpp"
#include "core/text/name_pattern.hpp"
#include "store/module_series.hpp"
#include "store/series_reduction.hpp"

namespace msmon {

namespace {

constexpr std::string_view kUpdateRatio = "derived.update_ratio";
constexpr std::string_view kLayerGrad = "derived.layer_grad";

// The name up to and including its "layers.N" ("module.decoder.layers.3.mlp.fc1.weight" -> "module.decoder.layers.3");
// empty outside the layers.
std::string layer_prefix(std::string_view name) {
    for (std::string_view key : {"layers.", "layer."}) {
        std::size_t at = 0;
        while ((at = name.find(key, at)) != std::string_view::npos) {
            const bool word = at == 0 || name[at - 1] == '.' || name[at - 1] == '_';
            std::size_t i = at + key.size();
            while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
            if (word && i > at + key.size() && (i == name.size() || name[i] == '.'))
                return std::string(name.substr(0, i));
            at += key.size();
        }
    }
    return {};
}

// A derived value's identity: rank, vpp stage, name, micro-step, step.
using Key = std::tuple<int, std::string, std::string, std::optional<std::int64_t>, std::int64_t>;

class DerivedReader final : public Reader {
public:
    explicit DerivedReader(std::unique_ptr<Reader> base) : base_(std::move(base)) {}

    void points(const PointFilter& filter, const std::function<void(const Point&)>& sink) override {
        if (!filter.kind || !is_derived_kind(*filter.kind)) return base_->points(filter, sink);
        if (filter.op && *filter.op != op_of(*filter.kind)) return;
        if (*filter.kind == kUpdateRatio) update_ratio(filter, sink);
        else if (*filter.kind == kLayerGrad) layer_grad(filter, sink);
    }
    StoreSummary summary() override { return base_->summary(); }
    std::vector<IssueRecord> issues(std::size_t limit) override { return base_->issues(limit); }
    std::uint64_t issue_count() override { return base_->issue_count(); }
    std::vector<AnomalyRecord> anomalies(const AnomalyFilter& f) override { return base_->anomalies(f); }
    AnomalyGroupPage anomaly_groups(const AnomalyGroupRequest& r) override { return base_->anomaly_groups(r); }
    AnomalyMarks anomaly_marks(double min_score, std::int64_t from_step) override {
        return base_->anomaly_marks(min_score, from_step);
    }
    std::vector<EventRecord> events() override { return base_->events(); }
    std::vector<RunConfigEntry> run_config(std::optional<int> rank) override { return base_->run_config(rank); }
    std::vector<ThresholdUse> thresholds_used() override { return base_->thresholds_used(); }
    std::vector<CheckpointRecord> checkpoints() override { return base_->checkpoints(); }
    StoreCatalog catalog() override {
        StoreCatalog c = base_->catalog();
        const auto has_norm = [&](std::string_view kind) {
            return std::any_of(c.kinds.begin(), c.kinds.end(), [&](const auto& k) {
                return k.first == kind && std::find(k.second.begin(), k.second.end(), "norm") != k.second.end();
            });
        };
        if (has_norm("param_origin") && has_norm("param_updated"))
            c.kinds.push_back({std::string(kUpdateRatio), {"ratio"}});
        if (has_norm("grad_reduced") || has_norm("grad_unreduced"))
            c.kinds.push_back({std::string(kLayerGrad), {"norm"}});
        return c;
    }
    std::vector<std::pair<int, std::int64_t>> rank_last_steps() override { return base_->rank_last_steps(); }
    std::vector<RunSegment> run_segments() override { return base_->run_segments(); }
    std::vector<StepWallTime> step_times() override { return base_->step_times(); }
    std::optional<JobPlacement> job_placement() override { return base_->job_placement(); }
    ModuleInfo module_info(int rank, const std::string& name) override { return base_->module_info(rank, name); }
    std::vector<std::int64_t> collected_steps(std::size_t limit) override { return base_->collected_steps(limit); }

    std::vector<RankSeries> rank_series(const RankSeriesRequest& request) override {
        if (!is_derived_kind(request.kind)) return base_->rank_series(request);
        // Every tensor's value at a step into one by the op's rule, per rank.
        std::map<int, std::map<std::int64_t, StepAggregate>> by_rank;
        const AggregateRule rule = aggregate_rule(request.op);
        PointFilter f;
        f.kind = request.kind;
        f.op = request.op;
        f.name_regex = request.name_regex;
        // Only the steps asked for are worked out: the window's, or the latest `last_steps` of the run.
        std::optional<std::int64_t> lo = request.window.lo, hi = request.window.hi;
        if (request.last_steps > 0) {
            const StoreCatalog c = base_->catalog();
            if (c.max_step >= c.min_step) lo = std::max(lo.value_or(INT64_MIN), c.max_step - request.last_steps + 1);
        }
        f.steps = step_range(lo, hi);
        points(f, [&](const Point& p) {
            auto& a = by_rank[p.rank][p.step];
            a.step = p.step;
            add_value(rule, a, p.value);
        });
        std::vector<RankSeries> out;
        std::int64_t last = INT64_MIN;
        for (const auto& [rank, steps] : by_rank) {
            RankSeries s{rank, {}};
            for (const auto& [step, a] : steps) s.points.push_back({step, final_value(rule, a)});
            if (!s.points.empty()) last = std::max(last, s.points.back().step);
            out.push_back(std::move(s));
        }
        if (request.last_steps > 0 && last != INT64_MIN)
            for (auto& s : out)
                std::erase_if(s.points, [&](const StepValue& p) { return p.step <= last - request.last_steps; });
        reduce_series(out, request.window);
        return out;
    }
    // A derived kind's rows from its inputs' rows (the store's tensor list, not their values): the parameters both
    // param kinds list, or each layer of the gradient kind's names, in their order.
    std::vector<ModuleRow> module_rows(const std::string& kind, int rank) override {
        if (!is_derived_kind(kind)) return base_->module_rows(kind, rank);
        std::vector<ModuleRow> out;
        if (kind == kUpdateRatio) {
            const auto updated = base_->module_rows("param_updated", rank);
            for (auto& row : base_->module_rows("param_origin", rank))
                if (std::find(updated.begin(), updated.end(), row) != updated.end()) out.push_back(std::move(row));
        } else if (kind == kLayerGrad) {
            for (const auto& row : base_->module_rows(gradient_kind(), rank)) {
                ModuleRow layer{layer_prefix(row.name), row.vpp_stage, row.micro_step};
                if (!layer.name.empty() && std::find(out.begin(), out.end(), layer) == out.end())
                    out.push_back(std::move(layer));
            }
        }
        return out;
    }
    // The rows asked for over the window's steps only.
    std::vector<std::vector<StepValue>> module_series(const ModuleSeriesRequest& request) override {
        if (!is_derived_kind(request.kind)) return base_->module_series(request);
        std::map<std::tuple<std::string, std::string, std::optional<std::int64_t>>, std::size_t> index;
        for (std::size_t i = 0; i < request.rows.size(); ++i)
            index.emplace(std::make_tuple(request.rows[i].vpp_stage, request.rows[i].name, request.rows[i].micro_step),
                          i);
        std::vector<std::vector<StepValue>> out(request.rows.size());
        PointFilter f;
        f.rank = request.rank;
        f.kind = request.kind;
        f.op = request.op;
        f.steps = step_range(request.window.lo, request.window.hi);
        points(f, [&](const Point& p) {  // one value a step and row: derived points are worked out once each
            const auto it = index.find(std::make_tuple(std::string(p.vpp_stage), std::string(p.name), p.micro_step));
            if (it != index.end()) out[it->second].push_back({p.step, p.value});
        });
        reduce_module_series(out, request.window);
        return out;
    }

private:
    static std::string_view op_of(std::string_view kind) { return kind == kUpdateRatio ? "ratio" : "norm"; }

    // The steps [lo, hi] as a step list (either bound absent: open); none when both are.
    static std::optional<StepList> step_range(std::optional<std::int64_t> lo, std::optional<std::int64_t> hi) {
        if (!lo && !hi) return std::nullopt;
        std::string error;
        const std::int64_t a = std::max<std::int64_t>(lo.value_or(0), 0), b = hi.value_or(INT64_MAX);
        if (b < a) return StepList::parse("0-0", error);  // nothing: step 0 is read and dropped by the window
        return StepList::parse(std::to_string(a) + "-" + std::to_string(b), error);
    }

    // The gradient kind layer_grad reads: grad_reduced when it has norms, else grad_unreduced (catalog() lists the
    // derived kind when either has).
    std::string gradient_kind() {
        const StoreCatalog c = base_->catalog();
        const bool reduced = std::any_of(c.kinds.begin(), c.kinds.end(), [](const auto& k) {
            return k.first == "grad_reduced" && std::find(k.second.begin(), k.second.end(), "norm") != k.second.end();
        });
        return reduced ? "grad_reduced" : "grad_unreduced";
    }

    // The base kind's norms under `filter`'s rank and steps (the name filter is the derived name's), as
    // key -> value, a later run's value replacing an earlier one's; the keys in first-seen order.
    void norms(const PointFilter& filter, std::string_view kind, std::map<Key, double>& values,
               std::vector<Key>* order) {
        PointFilter f;
        f.rank = filter.rank;
        f.steps = filter.steps;
        f.kind = std::string(kind);
        f.op = "norm";
        base_->points(f, [&](const Point& p) {
            if (p.is_text) return;
            Key key{p.rank, std::string(p.vpp_stage), std::string(p.name), p.micro_step, p.step};
            const auto [it, added] = values.insert_or_assign(std::move(key), p.value);
            if (added && order) order->push_back(it->first);
        });
    }

    static std::optional<NamePattern> pattern_of(const PointFilter& filter) {
        if (!filter.name_regex) return std::nullopt;
        return NamePattern::compile_or_throw(*filter.name_regex);
    }

    // Emits, per rank in order, each name's steps ascending (the order points() promises).
    static void emit(std::string_view kind, std::string_view op, std::vector<std::pair<Key, double>>& out,
                     const std::function<void(const Point&)>& sink) {
        std::map<std::tuple<int, std::string, std::string, std::optional<std::int64_t>>, std::size_t> first_seen;
        for (const auto& [key, v] : out)
            first_seen.try_emplace({std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key)},
                                   first_seen.size());
        std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
            const auto ia =
                first_seen[{std::get<0>(a.first), std::get<1>(a.first), std::get<2>(a.first), std::get<3>(a.first)}];
            const auto ib =
                first_seen[{std::get<0>(b.first), std::get<1>(b.first), std::get<2>(b.first), std::get<3>(b.first)}];
            if (std::get<0>(a.first) != std::get<0>(b.first)) return std::get<0>(a.first) < std::get<0>(b.first);
            if (ia != ib) return ia < ib;
            return std::get<4>(a.first) < std::get<4>(b.first);
        });
        for (const auto& [key, v] : out) {
            Point p;
            p.rank = std::get<0>(key);
            p.kind = kind;
            p.vpp_stage = std::get<1>(key);
            p.name = std::get<2>(key);
            p.micro_step = std::get<3>(key);
            p.step = std::get<4>(key);
            p.op = op;
            p.value = v;
            sink(p);
        }
    }

    void update_ratio(const PointFilter& filter, const std::function<void(const Point&)>& sink) {
        const auto pattern = pattern_of(filter);
        std::map<Key, double> origin, updated;
        std::vector<Key> order;
        norms(filter, "param_origin", origin, &order);
        norms(filter, "param_updated", updated, nullptr);
        std::vector<std::pair<Key, double>> out;
        for (const Key& key : order) {
            if (pattern && !pattern->search(std::get<2>(key))) continue;
            const auto u = updated.find(key);
            if (u == updated.end()) continue;
            // The one definition the optimizer-step check uses too; none when the weight has no size.
            if (const auto ratio = msmon::update_ratio(origin[key], u->second)) out.push_back({key, *ratio});
        }
        emit(kUpdateRatio, "ratio", out, sink);
    }

    void layer_grad(const PointFilter& filter, const std::function<void(const Point&)>& sink) {
        const auto pattern = pattern_of(filter);
        std::map<Key, double> norms_by_tensor;
        std::vector<Key> order;
        norms(filter, gradient_kind(), norms_by_tensor, &order);
        std::map<Key, double> sums;  // (rank, vpp, layer, micro, step) -> sum of squares
        std::vector<Key> layer_order;
        for (const Key& key : order) {
            std::string layer = layer_prefix(std::get<2>(key));
            if (layer.empty() || (pattern && !pattern->search(layer))) continue;
            const double g = norms_by_tensor[key];
            Key lk{std::get<0>(key), std::get<1>(key), std::move(layer), std::get<3>(key), std::get<4>(key)};
            const auto [it, added] = sums.try_emplace(lk, 0.0);
            it->second += g * g;  // a NaN stays NaN, as the layer's norm would
            if (added) layer_order.push_back(lk);
        }
        std::vector<std::pair<Key, double>> out;
        for (const Key& k : layer_order) out.push_back({k, std::sqrt(sums[k])});
        emit(kLayerGrad, "norm", out, sink);
    }

    std::unique_ptr<Reader> base_;
};

}  // namespace

std::unique_ptr<Reader> with_derived_kinds(std::unique_ptr<Reader> base) {
    return std::make_unique<DerivedReader>(std::move(base));
}

}  // namespace msmon
