// What the expert-load view shows: per MoE layer, each expert's load over the steps (summed over the ranks
// shown), the latest load per expert and the layer's imbalance (max / mean) — routing collapse at a glance.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/reader.hpp"
#include "tui/widgets/downsample.hpp"

namespace msmon::tui {

inline constexpr double kImbalanceFlag = 2.0;  // max/mean at or above this: flagged (a balanced router stays near 1)

struct ExpertSeries {
    std::string label;  // "ep_3"
    int index = 0;
    std::vector<SeriesPoint> points;  // step-sorted, summed over the ranks shown
};

struct ExpertLayer {
    std::string name;                   // "layer_1"
    std::vector<ExpertSeries> experts;  // by expert index
    std::int64_t first_step = 0, last_step = -1;
    std::int64_t current_step = -1;           // the latest step every expert of the layer has
    std::vector<double> current;              // load per expert at current_step (NaN where absent)
    double mean = 0, max = 0, imbalance = 0;  // over `current`
    int hottest = -1;                         // index into experts
    bool flagged() const { return imbalance >= kImbalanceFlag; }
};

struct ExpertLoadModel {
    std::vector<ExpertLayer> layers;  // by name, layer numbers in numeric order
    std::vector<int> ranks;           // ranks that wrote expert_load
};

// `rank`: one rank's loads; nullopt: the sum over every rank.
ExpertLoadModel collect_expert_load(Reader& reader, std::optional<int> rank);

// The figures of one layer from its experts' points (exposed for tests).
void summarise_layer(ExpertLayer& layer);

}  // namespace msmon::tui
