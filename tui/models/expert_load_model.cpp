// Expert load from the store: kind expert_load, name "<layer>/<expert>", op value (core/parse/tensorboard_tags).
#include "tui/models/expert_load_model.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/parse/tensorboard_tags.hpp"

namespace msmon::tui {

namespace {

// "layer_12" after "layer_2": the number in the name counts, then the text.
bool layer_before(const std::string& a, const std::string& b) {
    auto number = [](const std::string& s) {
        const auto d = s.find_first_of("0123456789");
        return d == std::string::npos ? -1LL : std::atoll(s.c_str() + d);
    };
    const long long na = number(a), nb = number(b);
    return na != nb ? na < nb : a < b;
}

}  // namespace

void summarise_layer(ExpertLayer& layer) {
    layer.first_step = 0;
    layer.last_step = -1;
    layer.current_step = -1;
    std::int64_t common = INT64_MAX;
    bool any = false;
    for (const auto& e : layer.experts) {
        if (e.points.empty()) continue;
        layer.first_step = any ? std::min(layer.first_step, e.points.front().step) : e.points.front().step;
        layer.last_step = std::max(layer.last_step, e.points.back().step);
        common = std::min(common, e.points.back().step);
        any = true;
    }
    layer.current.assign(layer.experts.size(), NAN);
    layer.mean = layer.max = layer.imbalance = 0;
    layer.hottest = -1;
    if (!any) return;
    layer.current_step = common;
    double sum = 0;
    int n = 0;
    for (std::size_t i = 0; i < layer.experts.size(); ++i) {
        const auto& pts = layer.experts[i].points;
        auto it = std::lower_bound(pts.begin(), pts.end(), common,
                                   [](const SeriesPoint& p, std::int64_t s) { return p.step < s; });
        if (it == pts.end() || it->step != common || !std::isfinite(it->value)) continue;
        layer.current[i] = it->value;
        sum += it->value;
        ++n;
        if (layer.hottest < 0 || it->value > layer.max) {
            layer.max = it->value;
            layer.hottest = static_cast<int>(i);
        }
    }
    layer.mean = n ? sum / n : 0;
    layer.imbalance = layer.mean > 0 ? layer.max / layer.mean : 0;
}

ExpertLoadModel collect_expert_load(Reader& reader, std::optional<int> rank) {
    ExpertLoadModel model;
    PointFilter filter;
    filter.kind = "expert_load";
    std::set<int> ranks;
    // layer → expert label → step → load (summed over ranks)
    std::map<std::string, std::map<std::string, std::map<std::int64_t, double>>> loads;
    reader.points(filter, [&](const Point& p) {
        ranks.insert(p.rank);
        if (rank && p.rank != *rank) return;
        const std::string_view name = p.name;
        const auto slash = name.rfind('/');
        const std::string layer(slash == std::string_view::npos ? name : name.substr(0, slash));
        const std::string expert(slash == std::string_view::npos ? "ep_0" : name.substr(slash + 1));
        loads[layer][expert][p.step] += p.value;
    });
    model.ranks.assign(ranks.begin(), ranks.end());
    for (auto& [layer_name, experts] : loads) {
        ExpertLayer layer;
        layer.name = layer_name;
        for (auto& [label, steps] : experts) {
            ExpertSeries e;
            e.label = label;
            e.index = expert_index(label).value_or(static_cast<int>(layer.experts.size()));
            e.points.reserve(steps.size());
            for (const auto& [s, v] : steps) e.points.push_back({s, v});
            layer.experts.push_back(std::move(e));
        }
        std::sort(layer.experts.begin(), layer.experts.end(), [](const ExpertSeries& a, const ExpertSeries& b) {
            return a.index != b.index ? a.index < b.index : a.label < b.label;
        });
        summarise_layer(layer);
        model.layers.push_back(std::move(layer));
    }
    std::sort(model.layers.begin(), model.layers.end(),
              [](const ExpertLayer& a, const ExpertLayer& b) { return layer_before(a.name, b.name); });
    return model;
}

}  // namespace msmon::tui
