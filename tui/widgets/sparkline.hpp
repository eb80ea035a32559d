// One row of a series: ▁▂▃▄▅▆▇█ (or ASCII " .:-=+*#"), NaN and Inf as marks, never dropped.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
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
    // Steps not read yet (a backlog's history): a column there with no value is drawn as unread (░, ASCII '?'),
    // not as a gap in the data.
    std::optional<std::pair<std::int64_t, std::int64_t>> unread;
    Style unread_style{Color::dim, Color::none, kPlain};
};

// Draws `columns` (already downsampled to at most `width`) at (x, y), right-aligned so the newest is rightmost.
// A column with a NaN shows '!' (ASCII '!'), with +Inf '^', with -Inf 'v'. Marked columns use mark_style; empty
// columns in `unread` show ░.
void draw_sparkline(ScreenBuffer& buf, int x, int y, int width, const std::vector<ColumnStat>& columns,
                    const Glyphs& glyphs, const SparklineOptions& options);

}  // namespace msmon::tui
