// One row of a series: ▁▂▃▄▅▆▇█ (or ASCII " .:-=+*#"), NaN and Inf as marks, never dropped.
#pragma once

#include <optional>
#include <vector>

#include "tui/screen_buffer.hpp"
#include "tui/widgets/downsample.hpp"

namespace msmon::tui {

struct SparklineOptions {
    std::optional<double> lo, hi;  // value range; default: the finite min/max of the columns
    bool log_scale = false;
    Style style;
    Style nan_style{Color::bad, Color::none, kBold};
    Style mark_style{Color::warn, Color::none, kBold};  // cells whose step is in `marked_steps`
};

// Draws `columns` (already downsampled to at most `width`) at (x, y), right-aligned so the newest is rightmost.
// A column with a NaN shows '!' (ASCII '!'), with +Inf '^', with -Inf 'v'. Marked columns use mark_style.
void draw_sparkline(ScreenBuffer& buf, int x, int y, int width, const std::vector<ColumnStat>& columns,
                    const Glyphs& glyphs, const SparklineOptions& options);

}  // namespace msmon::tui
