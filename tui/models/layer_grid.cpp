#include "tui/models/layer_grid.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/series/op_aggregate.hpp"
#include "tui/models/layer_rows.hpp"

namespace msmon::tui {

std::vector<GridRow> grid_rows(const std::vector<ModuleRow>& rows, const GridRowOptions& options) {
    // Tensors in the order of their first row; micro-steps of one tensor together unless shown apart.
    std::vector<GridRow> tensors;
    std::map<std::pair<std::string, std::string>, std::size_t> index;  // (vpp stage, name) -> tensors
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const ModuleRow& row = rows[i];
        if (options.filter && !options.filter->matches(row.name)) continue;
        if (!options.micro_steps_apart) {
            const auto [it, added] = index.try_emplace({row.vpp_stage, row.name}, tensors.size());
            if (!added) {
                tensors[it->second].tensors.front().push_back(i);
                continue;
            }
        }
        GridRow t;
        t.label = row.name;
        if (options.micro_steps_apart && row.micro_step) t.label += ":" + std::to_string(*row.micro_step);
        t.layer = layer_of(row.name);
        t.tensors = {{i}};
        tensors.push_back(std::move(t));
    }
    if (options.folded_layers.empty()) return tensors;
    // A folded layer: its consecutive tensors as one row.
    std::vector<GridRow> out;
    for (auto& t : tensors) {
        const bool fold = t.layer && options.folded_layers.count(*t.layer) > 0;
        if (fold && !out.empty() && out.back().folded_layer && out.back().layer == t.layer) {
            out.back().tensors.push_back(std::move(t.tensors.front()));
            continue;
        }
        if (fold) {
            GridRow layer;
            layer.layer = t.layer;
            layer.folded_layer = true;
            layer.tensors.push_back(std::move(t.tensors.front()));
            out.push_back(std::move(layer));
            continue;
        }
        out.push_back(std::move(t));
    }
    for (auto& r : out)
        if (r.folded_layer)
            r.label = "+ layers." + std::to_string(*r.layer) + ": " + std::to_string(r.tensors.size()) +
                      (r.tensors.size() == 1 ? " tensor" : " tensors");
    return out;
}

std::vector<StepValue> fold_micro_steps(const std::vector<const std::vector<StepValue>*>& parts, std::string_view op) {
    if (parts.size() == 1) return *parts.front();
    const AggregateRule rule = aggregate_rule(op);
    std::map<std::int64_t, StepAggregate> by_step;
    for (const auto* part : parts)
        for (const auto& p : *part) {
            auto& a = by_step[p.step];
            a.step = p.step;
            add_value(rule, a, p.value);
        }
    std::vector<StepValue> out;
    out.reserve(by_step.size());
    for (const auto& [step, a] : by_step) out.push_back({step, final_value(rule, a)});
    return out;
}

std::vector<ColumnStat> step_cells(const std::vector<StepValue>& series, std::int64_t lo, std::int64_t hi,
                                   bool relative, std::size_t history) {
    std::vector<SeriesPoint> points;
    const auto first = std::lower_bound(series.begin(), series.end(), lo,
                                        [](const StepValue& p, std::int64_t s) { return p.step < s; });
    for (auto it = first; it != series.end() && it->step <= hi; ++it)
        points.push_back({it->step, relative && std::isfinite(it->value)
                                        ? relative_level(it->value, recent_median(series, it->step, history))
                                        : it->value});
    const std::int64_t span = hi - lo + 1;
    return downsample_minmax(points, lo, hi, static_cast<int>(std::clamp<std::int64_t>(span, 1, 1 << 20)));
}

std::vector<ColumnStat> baseline_cells(const std::vector<StepValue>& series, const std::vector<StepValue>& baseline,
                                       std::int64_t lo, std::int64_t hi) {
    std::vector<SeriesPoint> points;
    auto b = std::lower_bound(baseline.begin(), baseline.end(), lo,
                              [](const StepValue& p, std::int64_t s) { return p.step < s; });
    const auto first = std::lower_bound(series.begin(), series.end(), lo,
                                        [](const StepValue& p, std::int64_t s) { return p.step < s; });
    for (auto it = first; it != series.end() && it->step <= hi; ++it) {
        if (!std::isfinite(it->value)) {
            points.push_back({it->step, it->value});
            continue;
        }
        while (b != baseline.end() && b->step < it->step) ++b;
        if (b == baseline.end() || b->step != it->step || !std::isfinite(b->value) || b->value == 0) continue;
        points.push_back({it->step, relative_level(it->value, b->value)});
    }
    const std::int64_t span = hi - lo + 1;
    return downsample_minmax(points, lo, hi, static_cast<int>(std::clamp<std::int64_t>(span, 1, 1 << 20)));
}

std::vector<ColumnStat> fold_cells(const std::vector<std::vector<ColumnStat>>& members, bool relative,
                                   std::vector<int>* winner) {
    if (members.empty()) return {};
    std::vector<ColumnStat> out = members.front();
    if (winner) winner->assign(out.size(), -1);
    // How extreme a cell is: non-finite first, then |level| (relative) or the value.
    const auto weight = [&](const ColumnStat& c) {
        if (c.has_nan || c.has_pos_inf || c.has_neg_inf) return std::numeric_limits<double>::infinity();
        return relative ? std::max(std::abs(c.min), std::abs(c.max)) : c.max;
    };
    for (std::size_t k = 0; k < out.size(); ++k) {
        int best = -1;
        double best_weight = 0;
        for (std::size_t m = 0; m < members.size(); ++m) {
            if (k >= members[m].size()) continue;
            const ColumnStat& c = members[m][k];
            if (c.count == 0 && !c.has_nan && !c.has_pos_inf && !c.has_neg_inf) continue;
            const double w = weight(c);
            if (best < 0 || w > best_weight) best = static_cast<int>(m), best_weight = w;
        }
        if (best >= 0) out[k] = members[static_cast<std::size_t>(best)][k];
        if (winner) (*winner)[k] = best;
    }
    return out;
}

IncidentCells incident_cells(const IncidentSet& set, const std::string& kind) {
    IncidentCells cells;
    for (std::size_t i = 0; i < set.incidents.size(); ++i) {
        const Incident& incident = set.incidents[i];
        if (incident.score < IncidentIndex::kMarkScore) continue;
        for (const std::size_t m : incident.members) {
            const AnomalyRecord& a = set.anomalies[m];
            if (a.kind == kind && a.score >= IncidentIndex::kMarkScore) cells.members.insert({a.rank, a.step, a.name});
        }
        if (i == 0) {
            const AnomalyRecord& a = set.anomalies[incident.origin];
            if (a.kind == kind) cells.origin = IncidentCells::Cell{a.rank, a.step, a.name};
        }
    }
    return cells;
}

}  // namespace msmon::tui
