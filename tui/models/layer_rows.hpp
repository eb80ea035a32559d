// The Layers view's rows: a rank's tensors in forward order, folded by layer, and each cell's colour
// level relative to its own row's recent history, so that a 40x jump in a tiny tensor shows as strongly as in a
// large one.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/reader.hpp"

namespace msmon::tui {

// The N of the first "layers.N." (or "layer.N.", "layers_N.") in a tensor's name; none outside the layers.
std::optional<int> layer_of(std::string_view name);

// A run of consecutive rows of one layer (or of no layer), as the view folds them.
struct LayerGroup {
    std::optional<int> layer;
    std::size_t first = 0, count = 0;
};

// The rows' consecutive runs by layer_of, in order: embedding, layers.0 .. layers.N, head for a forward order.
std::vector<LayerGroup> group_by_layer(const std::vector<ModuleRow>& rows);

// A value against its row's reference (the median of the row's recent finite values): log10(|v| / |reference|),
// 0 when either is zero or the reference is missing; NaN for a non-finite value (drawn with its own mark).
double relative_level(double value, std::optional<double> reference);

// The median of a row's finite values at steps before `step` among the last `window` of them: the reference
// relative_level compares a cell with. None when there are none.
std::optional<double> recent_median(const std::vector<StepValue>& row, std::int64_t step, std::size_t window);

}  // namespace msmon::tui
