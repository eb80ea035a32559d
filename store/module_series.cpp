// Reader's default module_rows / module_series (through points(): any store answers them, slowly), and the
// helpers every store's own answer uses.
#include "store/module_series.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "store/series_reduction.hpp"

namespace msmon {

void merge_later_run(std::vector<StepValue>& into, const std::vector<StepValue>& run) {
    if (run.empty()) return;
    if (into.empty() || into.back().step < run.front().step) {
        into.insert(into.end(), run.begin(), run.end());
        return;
    }
    std::vector<StepValue> out;
    out.reserve(into.size() + run.size());
    std::size_t a = 0, b = 0;
    while (a < into.size() || b < run.size()) {
        if (b == run.size() || (a < into.size() && into[a].step < run[b].step)) {
            out.push_back(into[a++]);
        } else {
            if (a < into.size() && into[a].step == run[b].step) ++a;  // the later run's value
            out.push_back(run[b++]);
        }
    }
    into = std::move(out);
}

void reduce_module_series(std::vector<std::vector<StepValue>>& series, const SeriesWindow& window) {
    for (auto& s : series)
        std::erase_if(s, [&](const StepValue& p) {
            return (window.lo && p.step < *window.lo) || (window.hi && p.step > *window.hi);
        });
    if (window.columns <= 0) return;
    std::vector<RankSeries> as_ranks(series.size());
    for (std::size_t i = 0; i < series.size(); ++i) as_ranks[i] = {static_cast<int>(i), std::move(series[i])};
    reduce_series(as_ranks, window);
    for (std::size_t i = 0; i < series.size(); ++i) series[i] = std::move(as_ranks[i].points);
}

std::vector<ModuleRow> Reader::module_rows(const std::string& kind, int rank) {
    std::vector<ModuleRow> rows;
    std::map<std::tuple<std::string, std::string, std::optional<std::int64_t>>, bool> seen;
    PointFilter filter;
    filter.rank = rank;
    filter.kind = kind;
    points(filter, [&](const Point& p) {
        auto key = std::make_tuple(std::string(p.vpp_stage), std::string(p.name), p.micro_step);
        if (seen.emplace(key, true).second)
            rows.push_back({std::string(p.name), std::string(p.vpp_stage), p.micro_step});
    });
    return rows;
}

std::vector<std::vector<StepValue>> Reader::module_series(const ModuleSeriesRequest& request) {
    std::map<std::tuple<std::string, std::string, std::optional<std::int64_t>>, std::size_t> index;
    for (std::size_t i = 0; i < request.rows.size(); ++i) {
        const auto& r = request.rows[i];
        index.emplace(std::make_tuple(r.vpp_stage, r.name, r.micro_step), i);
    }
    std::vector<std::vector<StepValue>> out(request.rows.size());
    // points() streams a rank's runs oldest first, each tensor's steps ascending: collect a run, then merge it.
    std::vector<std::vector<StepValue>> run_points(request.rows.size());
    std::int64_t run = -1;
    const auto flush = [&] {
        for (std::size_t i = 0; i < out.size(); ++i) {
            merge_later_run(out[i], run_points[i]);
            run_points[i].clear();
        }
    };
    PointFilter filter;
    filter.rank = request.rank;
    filter.kind = request.kind;
    filter.op = request.op;
    points(filter, [&](const Point& p) {
        if (p.is_text) return;
        if (p.run_id != run) flush(), run = p.run_id;
        const auto it = index.find(std::make_tuple(std::string(p.vpp_stage), std::string(p.name), p.micro_step));
        if (it == index.end()) return;
        auto& pts = run_points[it->second];
        if (!pts.empty() && pts.back().step == p.step) pts.back().value = p.value;  // a repeated row: the later one
        else pts.push_back({p.step, p.value});
    });
    flush();
    reduce_module_series(out, request.window);
    return out;
}

}  // namespace msmon
