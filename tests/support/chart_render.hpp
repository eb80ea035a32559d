// Draws per-rank series the way the Chart view does (every rank but the first faint, the first bold), so tests
// can check that a reduced series draws exactly as the full one.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "store/reader.hpp"
#include "tui/screen_buffer.hpp"

namespace msmon::test {

struct ChartFrame {
    std::int64_t lo = 0, hi = 0;
    int width = 80, height = 20;
    bool log_y = false, unicode = true;
    std::optional<std::int64_t> cursor;
};

struct RenderedChart {
    tui::ScreenBuffer buffer{1, 1};
    int plot_columns = 0;
};

RenderedChart render_chart(const std::vector<RankSeries>& series, const ChartFrame& frame);

// The first cell where two renderings differ, as "x,y: 'a' vs 'b'", or empty when they are equal.
std::string first_difference(const tui::ScreenBuffer& a, const tui::ScreenBuffer& b);

}  // namespace msmon::test
