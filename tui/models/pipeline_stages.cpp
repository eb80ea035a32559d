#include "tui/models/pipeline_stages.hpp"

#include <algorithm>
#include <climits>
#include <set>
#include <tuple>

#include "tui/models/layer_rows.hpp"

namespace msmon::tui {

namespace {

// Where a rank's row sits in the model: before every layer (-1), in its layer, after every layer (INT_MAX).
std::vector<int> model_positions(const std::vector<ModuleRow>& rows) {
    std::vector<int> pos(rows.size());
    std::optional<int> first_layered;
    for (std::size_t i = 0; i < rows.size() && !first_layered; ++i)
        if (layer_of(rows[i].name)) first_layered = static_cast<int>(i);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto layer = layer_of(rows[i].name);
        if (layer) pos[i] = *layer;
        else if (!first_layered || static_cast<int>(i) < *first_layered) pos[i] = -1;
        else pos[i] = INT_MAX;  // after the layers (or between them: kept with what follows)
    }
    return pos;
}

std::string ranks_text(const std::vector<int>& ranks) {
    if (ranks.empty()) return "";
    bool contiguous = true;
    for (std::size_t i = 1; i < ranks.size(); ++i) contiguous = contiguous && ranks[i] == ranks[i - 1] + 1;
    if (ranks.size() == 1) return "r" + std::to_string(ranks.front());
    if (contiguous) return "r" + std::to_string(ranks.front()) + "-" + std::to_string(ranks.back());
    return "r" + std::to_string(ranks.front()) + ",+" + std::to_string(ranks.size() - 1);
}

}  // namespace

std::vector<PipelineStage> pipeline_stages(const std::map<int, std::vector<ModuleRow>>& rows_by_rank) {
    std::map<std::set<int>, PipelineStage> by_layers;
    for (const auto& [rank, rows] : rows_by_rank) {
        std::set<int> layers;
        const auto pos = model_positions(rows);
        bool before = false, after = false;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            if (pos[i] == -1) before = true;
            else if (pos[i] == INT_MAX) after = true;
            else layers.insert(pos[i]);
        }
        PipelineStage& s = by_layers[layers];
        s.ranks.push_back(rank);
        if (!layers.empty()) s.first_layer = *layers.begin(), s.last_layer = *layers.rbegin();
        s.before_layers = s.before_layers || before;
        s.after_layers = s.after_layers || after;
    }
    // Stages hold disjoint slices of the layers. Anything else (one rank's files read further than another's while
    // a job is caught up with, a rank that has written only its embedding so far) is one stage.
    bool disjoint = by_layers.size() > 1;
    std::set<int> taken;
    for (const auto& [layers, s] : by_layers) {
        disjoint = disjoint && !layers.empty();
        for (int l : layers) disjoint = disjoint && taken.insert(l).second;
    }
    if (!disjoint) {
        PipelineStage all;
        for (const auto& [layers, s] : by_layers) {
            all.ranks.insert(all.ranks.end(), s.ranks.begin(), s.ranks.end());
            if (s.first_layer && (!all.first_layer || *s.first_layer < *all.first_layer))
                all.first_layer = s.first_layer;
            if (s.last_layer && (!all.last_layer || *s.last_layer > *all.last_layer)) all.last_layer = s.last_layer;
            all.before_layers = all.before_layers || s.before_layers;
            all.after_layers = all.after_layers || s.after_layers;
        }
        std::sort(all.ranks.begin(), all.ranks.end());
        return all.ranks.empty() ? std::vector<PipelineStage>{} : std::vector<PipelineStage>{all};
    }
    std::vector<PipelineStage> stages;
    for (auto& [layers, s] : by_layers) stages.push_back(std::move(s));
    std::sort(stages.begin(), stages.end(), [](const PipelineStage& a, const PipelineStage& b) {
        const int fa = a.first_layer.value_or(a.before_layers ? -1 : INT_MAX);
        const int fb = b.first_layer.value_or(b.before_layers ? -1 : INT_MAX);
        return std::tie(fa, a.ranks) < std::tie(fb, b.ranks);
    });
    return stages;
}

std::vector<ModuleRow> model_rows(const std::vector<const std::vector<ModuleRow>*>& ranks_rows) {
    struct Placed {
        int position;
        std::size_t seen;
        ModuleRow row;
    };
    std::vector<Placed> placed;
    std::set<std::tuple<std::string, std::string, std::optional<std::int64_t>>> seen;
    for (const auto* rows : ranks_rows) {
        const auto pos = model_positions(*rows);
        for (std::size_t i = 0; i < rows->size(); ++i) {
            const ModuleRow& r = (*rows)[i];
            if (seen.insert({r.vpp_stage, r.name, r.micro_step}).second) placed.push_back({pos[i], placed.size(), r});
        }
    }
    std::stable_sort(placed.begin(), placed.end(),
                     [](const Placed& a, const Placed& b) { return a.position < b.position; });
    std::vector<ModuleRow> out;
    out.reserve(placed.size());
    for (auto& p : placed) out.push_back(std::move(p.row));
    return out;
}

std::string describe_stages(const std::vector<PipelineStage>& stages) {
    if (stages.size() < 2) return "";
    std::string out = std::to_string(stages.size()) + " pipeline stages:";
    for (std::size_t i = 0; i < stages.size(); ++i) {
        const auto& s = stages[i];
        out += (i ? ", " : " ") + ranks_text(s.ranks);
        if (s.first_layer)
            out += " layers " + std::to_string(*s.first_layer) +
                   (*s.last_layer != *s.first_layer ? "-" + std::to_string(*s.last_layer) : "");
        else out += " no layer";
    }
    return out;
}

}  // namespace msmon::tui
