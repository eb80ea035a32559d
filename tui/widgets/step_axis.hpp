// A heatmap's step axis: under columns that each hold a span of steps, the first, the middle and the last step,
// each under its column (the middle only where it fits between the others).
#pragma once

#include "core/series/step_columns.hpp"
#include "tui/screen_buffer.hpp"

namespace msmon::tui {

// Columns x0 .. x0 + split.columns() - 1 of row y.
void draw_step_axis(ScreenBuffer& buf, int x0, int y, const StepColumns& split, const Style& style);

}  // namespace msmon::tui
