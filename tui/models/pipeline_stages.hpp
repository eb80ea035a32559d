// Ranks in the parallel layout: under pipeline parallelism each rank holds a slice of the model's
// layers, which its tensors' names tell (layers.N). Ranks holding the same layers form a stage; stages are put in
// model order, and their tensors into one model, each where its layer puts it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/reader.hpp"

namespace msmon::tui {

struct PipelineStage {
    std::vector<int> ranks;                            // ascending
    std::optional<int> first_layer, last_layer;        // the layers its tensors name; none: no layer
    bool before_layers = false, after_layers = false;  // holds what comes before every layer (the embedding) / after
};

// Ranks grouped by the set of layers they hold, in model order (the stage with the embedding, then by first layer).
// One stage when every rank holds the same layers (data or tensor parallelism alone).
std::vector<PipelineStage> pipeline_stages(const std::map<int, std::vector<ModuleRow>>& rows_by_rank);

// Several ranks' rows (each in its forward order) as one model: what comes before the first layer, each layer's
// rows in layer order, what comes after the last; a row held by several ranks once, where it was first seen.
std::vector<ModuleRow> model_rows(const std::vector<const std::vector<ModuleRow>*>& ranks_rows);

// "stage 0: r0-r3 layers 0-1" for each stage, for a title; empty with one stage.
std::string describe_stages(const std::vector<PipelineStage>& stages);

}  // namespace msmon::tui
