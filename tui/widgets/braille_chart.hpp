// A line chart of several series in Braille dots (2×4 per cell) with axes, ticks and a legend; ASCII falls back
// to one mark per cell. Min/max per column keep spikes; NaN and Inf are drawn as marks on the top/bottom edge.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tui/screen_buffer.hpp"
#include "tui/widgets/downsample.hpp"

namespace msmon::tui {

struct ChartSeries {
    std::string label;
    std::vector<SeriesPoint> points;  // step-sorted; a step going backwards (a restart) starts a new segment
    Style style;
    bool faint = false;  // drawn dim (the raw line behind a smoothed one, or comparison ranks)
    // The read-out shows a value only between the first and last points (a stretch, not a whole run).
    bool stretch = false;
};

struct ChartOptions {
    std::int64_t step_lo = 0, step_hi = 0;  // x range (inclusive)
    std::optional<double> y_lo, y_hi;       // default: the range of the visible finite values
    // Robust y: the range leaves out this fraction of the visible values at each end (0: none), so one spike does not
    // flatten the rest; points beyond it are marked on the plot's edge (↑ ↓, ASCII ' and ,).
    double clip_fraction = 0;
    bool log_y = false;
    std::optional<std::int64_t> cursor_step;  // vertical cursor with a read-out of each series' value there
    std::string title;
    // An x axis in other units than steps (the wall clock): each tick's label, the cursor's name in the read-out
    // ("step 35 12:03:44"), and x positions marked on the axis line (≈, ASCII ~: a pause clipped there). Unset:
    // steps.
    std::function<std::string(std::int64_t)> x_label;
    std::string cursor_label;
    std::vector<std::int64_t> x_marks;
    // Steps not read yet (a backlog's history, in steps): no line is drawn across them, and a cell column with
    // nothing drawn there is shaded unread (░, ASCII '?') instead of left as a gap in the data.
    std::optional<std::pair<std::int64_t, std::int64_t>> unread;
};

// Draws into the rectangle (x, y, width, height): y-axis labels on the left, x-axis ticks and the legend at
// the bottom. Never draws outside the rectangle. Returns the plot's width in pixel columns (0: no plot), the
// `columns` a reader's SeriesWindow needs for points that draw exactly as every step would.
int draw_chart(ScreenBuffer& buf, int x, int y, int width, int height, const std::vector<ChartSeries>& series,
               const ChartOptions& options, const Glyphs& glyphs);

// Debiased exponential moving average as TensorBoard draws smoothing (weight in [0, 1); NaN/Inf pass through
// unsmoothed and do not poison later values).
std::vector<SeriesPoint> smooth_debiased_ema(const std::vector<SeriesPoint>& points, double weight);

}  // namespace msmon::tui
