// Ranks × steps as coloured cells (one rank per row, steps across), for when ranks outnumber the rows a
// sparkline list could show. Colour intensity = value (linear or log); NaN/Inf cells are marked.
#pragma once

#include <optional>
#include <vector>

#include "tui/screen_buffer.hpp"
#include "tui/widgets/downsample.hpp"

namespace msmon::tui {

struct HeatmapOptions {
    bool log_scale = false;
    std::optional<double> lo, hi;  // colour range; default: finite min/max over all cells
};

// rows[i] = one rank's columns (same column count for all). If there are more rows than `height`, several
// ranks share a screen row (the max over them is shown, so an outlier rank is never hidden).
void draw_heatmap(ScreenBuffer& buf, int x, int y, int width, int height,
                  const std::vector<std::vector<ColumnStat>>& rows, const Glyphs& glyphs, const HeatmapOptions& options);

}  // namespace msmon::tui
