// Overview model: Reader::rank_series for the selection, summarised per rank, with the marks given.
#include "tui/models/overview_model.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace msmon::tui {

SeriesSelection default_selection(const StoreCatalog& catalog) {
    auto has = [&](const std::string& kind, const std::string& op) {
        for (const auto& [k, ops] : catalog.kinds)
            if (k == kind && std::find(ops.begin(), ops.end(), op) != ops.end()) return true;
        return false;
    };
    for (const auto& [kind, op] : std::vector<std::pair<std::string, std::string>>{
             // global norm first: every rank logs it, while only the last pipeline stage logs a real loss
             {"global_norm", "value"},
             {"loss", "value"},
             {"grad_reduced", "norm"},
             {"grad_unreduced", "norm"}})
        if (has(kind, op)) return {kind, op, std::nullopt};
    for (const auto& [kind, ops] : catalog.kinds)
        if (std::find(ops.begin(), ops.end(), "norm") != ops.end()) return {kind, "norm", std::nullopt};
    if (!catalog.kinds.empty() && !catalog.kinds.front().second.empty())
        return {catalog.kinds.front().first, catalog.kinds.front().second.front(), std::nullopt};
    return {};
}

std::string across_tensors(const std::string& op) {
    if (op == "value") return "";
    if (op == "norm") return "L2 of the tensors' norms";
    if (op == "max" || op == "min") return op + " over tensors";
    if (op == "nans") return "summed over tensors";
    return "averaged over tensors";
}

OverviewModel collect_overview(Reader& reader, const SeriesSelection& selection, std::int64_t window_steps,
                               const std::vector<std::pair<int, std::int64_t>>& marks) {
    OverviewModel m;
    m.catalog = reader.catalog();
    m.selection = selection;
    if (m.selection.kind.empty()) {  // the default, with the user's filter if any
        m.selection = default_selection(m.catalog);
        m.selection.name_regex = selection.name_regex;
    }
    if (m.selection.kind.empty()) return m;
    RankSeriesRequest req{m.selection.kind, m.selection.op, m.selection.name_regex, window_steps, {}};
    std::map<int, OverviewRow> rows;
    for (auto& rs : reader.rank_series(req)) {
        OverviewRow& row = rows[rs.rank];
        row.rank = rs.rank;
        row.points = std::move(rs.points);
        row.min = INFINITY;
        row.max = -INFINITY;
        for (const auto& p : row.points) {
            if (std::isnan(p.value)) {
                row.has_nan = true;
                continue;
            }
            row.min = std::min(row.min, p.value);
            row.max = std::max(row.max, p.value);
        }
        if (!row.points.empty()) {
            row.latest = row.points.back().value;
            m.step_lo = m.step_hi < m.step_lo ? row.points.front().step : std::min(m.step_lo, row.points.front().step);
            m.step_hi = std::max(m.step_hi, row.points.back().step);
        }
    }
    // Every rank the store knows gets a row, even one with no data for this selection yet.
    for (int r : m.catalog.ranks) rows.try_emplace(r).first->second.rank = r;
    // Marks before the window still flag the rank ("!").
    for (const auto& [rank, step] : marks)
        if (auto it = rows.find(rank); it != rows.end()) it->second.anomaly_steps.insert(step);
    for (const auto& c : reader.checkpoints()) m.unhealthy_checkpoints += !c.healthy;
    for (auto& [_, row] : rows) m.rows.push_back(std::move(row));
    return m;
}

}  // namespace msmon::tui
