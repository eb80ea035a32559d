// Filtering, grouping and sorting of anomalies. Grouping keeps the best-scored member as the row's face.
#include "tui/models/anomaly_table.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <tuple>
#include <unordered_map>

#include "core/detect/msprobe_rules.hpp"

namespace msmon::tui {

const char* anomaly_sort_name(AnomalySort s) {
    switch (s) {
        case AnomalySort::score:
            return "rank";
        case AnomalySort::first:
            return "first anomaly";
        case AnomalySort::step:
            return "step";
        case AnomalySort::rank:
            return "rank#";
        case AnomalySort::rule:
            return "rule";
        case AnomalySort::kind:
            return "kind";
        case AnomalySort::name:
            return "name";
        case AnomalySort::value:
            return "value";
        case AnomalySort::source:
            return "source";
    }
    return "";
}

AnomalyFilterTest::AnomalyFilterTest(const AnomalyTableFilter& filter) : filter_(filter) {
    if (filter.name_regex) name_ = NamePattern::compile_or_throw(*filter.name_regex);
}

bool AnomalyFilterTest::operator()(const AnomalyRecord& a) const {
    const auto& f = filter_;
    return !((f.rule && a.rule != *f.rule) || (f.kind && a.kind != *f.kind) || (f.source && a.source != *f.source) ||
             (f.rank && a.rank != *f.rank) || (f.steps && !f.steps->contains(a.step)) ||
             (name_ && !name_->search(a.name)));
}

std::vector<IncidentRow> build_incident_rows(const std::vector<AnomalyRecord>& list,
                                             const std::vector<Incident>& incidents, const AnomalyTableFilter& filter,
                                             const std::function<bool(std::size_t)>& expanded) {
    const AnomalyFilterTest passes(filter);
    std::vector<IncidentRow> rows;
    for (std::size_t i = 0; i < incidents.size(); ++i) {
        const Incident& inc = incidents[i];
        const auto first =
            std::find_if(inc.members.begin(), inc.members.end(), [&](std::size_t m) { return passes(list[m]); });
        if (first == inc.members.end()) continue;
        const bool open = expanded(i);
        rows.push_back({i, inc.origin, false, open});
        if (!open) continue;
        for (auto m = first; m != inc.members.end(); ++m)
            if (passes(list[*m])) rows.push_back({i, *m, true, false});
    }
    return rows;
}

std::vector<AnomalyRow> build_anomaly_rows(const std::vector<AnomalyRecord>& list, const AnomalyTableOptions& o) {
    const AnomalyFilterTest passes(o.filter);
    std::map<std::pair<int, std::int64_t>, int> breadth;
    for (const auto& a : list) ++breadth[{a.rank, a.step}];
    std::vector<AnomalyRow> rows;
    std::unordered_map<std::string, std::size_t> groups;
    std::string key;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const AnomalyRecord& a = list[i];
        if (!passes(a)) continue;
        const double rs = a.score > 0 ? a.score + 5.0 * std::log10(breadth[{a.rank, a.step}]) : 0;
        if (o.group) {
            key = a.source + '\x1f' + a.rule + '\x1f' + std::to_string(a.rank) + '\x1f' + a.kind + '\x1f' + a.name +
                  '\x1f' + a.op;
            auto [it, fresh] = groups.try_emplace(key, rows.size());
            if (!fresh) {
                AnomalyRow& row = rows[it->second];
                ++row.count;
                row.first_step = std::min(row.first_step, a.step);
                row.last_step = std::max(row.last_step, a.step);
                if (rs > row.rank_score) {
                    row.rank_score = rs;
                    row.first = i;
                }
                continue;
            }
        }
        rows.push_back({i, 1, a.step, a.step, rs});
    }
    auto key_less = [&](const AnomalyRow& x, const AnomalyRow& y) {
        const AnomalyRecord& a = list[x.first];
        const AnomalyRecord& b = list[y.first];
        switch (o.sort) {
            case AnomalySort::score:
                return x.rank_score > y.rank_score;
            case AnomalySort::first:
                return msprobe_analyser_less(
                    {a.step, a.micro_step.value_or(0), a.tag_name, a.vpp, a.pp_stage, a.call_id},
                    {b.step, b.micro_step.value_or(0), b.tag_name, b.vpp, b.pp_stage, b.call_id});
            case AnomalySort::step:
                return std::tie(a.step, a.rank) < std::tie(b.step, b.rank);
            case AnomalySort::rank:
                return std::tie(a.rank, a.step) < std::tie(b.rank, b.step);
            case AnomalySort::rule:
                return a.rule < b.rule;
            case AnomalySort::kind:
                return a.kind < b.kind;
            case AnomalySort::name:
                return a.name < b.name;
            case AnomalySort::value: {
                const double va = std::isnan(a.value) ? INFINITY : std::abs(a.value);
                const double vb = std::isnan(b.value) ? INFINITY : std::abs(b.value);
                return va > vb;
            }
            case AnomalySort::source:
                return a.source < b.source;
        }
        return false;
    };
    std::stable_sort(rows.begin(), rows.end(), key_less);
    if (o.descending) std::reverse(rows.begin(), rows.end());
    return rows;
}

}  // namespace msmon::tui
