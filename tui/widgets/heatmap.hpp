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

// The values the coolest and the hottest colour stand for (on a log scale too, as values).
struct HeatmapRange {
    double lo = 0, hi = 0;
};

// rows[i] = one rank's columns (same column count for all), right-aligned when fewer than `width`. If there are
// more rows than `height`, several ranks share a screen row: rows [heatmap_first_row(r), heatmap_first_row(r + 1))
// on screen row r (the max over them is shown, so an outlier rank is never hidden). Returns the colour range, if
// any cell has a finite value.
std::optional<HeatmapRange> draw_heatmap(ScreenBuffer& buf, int x, int y, int width, int height,
                                         const std::vector<std::vector<ColumnStat>>& rows, const Glyphs& glyphs,
                                         const HeatmapOptions& options);

// The first of the `rows` rows drawn on screen row r of a heatmap `height` rows high.
std::size_t heatmap_first_row(std::size_t r, std::size_t rows, int height);

// The colour scale, coolest to hottest, as 8 cells from (x, y); returns the columns used.
int draw_heatmap_scale(ScreenBuffer& buf, int x, int y, const Glyphs& glyphs);

}  // namespace msmon::tui
