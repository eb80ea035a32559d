// One-row sparkline: each column's level comes from its maximum, so a one-step spike shows at any zoom.
#include "tui/widgets/sparkline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace msmon::tui {

namespace {

constexpr char32_t kBlocks[8] = {U'▁', U'▂', U'▃', U'▄', U'▅', U'▆', U'▇', U'█'};
// " .:-=+*#" with '_' for the lowest level: a blank would read as "no data" next to an empty column.
constexpr char kAsciiRamp[8] = {'_', '.', ':', '-', '=', '+', '*', '#'};

// The value a column is placed by (its maximum), on the chosen scale; NaN when it has none there.
double scaled_max(const ColumnStat& c, bool log_scale) {
    if (c.count == 0) return std::numeric_limits<double>::quiet_NaN();
    if (!log_scale) return c.max;
    return c.max > 0 ? std::log10(c.max) : std::numeric_limits<double>::quiet_NaN();
}

int level_of(double v, double lo, double hi) {
    if (std::isnan(v)) return 0;  // non-positive on a log scale
    if (!(hi > lo)) return 3;     // a flat series sits mid-height
    const double t = (v - lo) / (hi - lo);
    return std::clamp(static_cast<int>(std::floor(t * 8)), 0, 7);
}

}  // namespace

void draw_sparkline(ScreenBuffer& buf, int x, int y, int width, const std::vector<ColumnStat>& columns,
                    const Glyphs& glyphs, const SparklineOptions& options) {
    if (width <= 0) return;
    const std::size_t shown = std::min(columns.size(), static_cast<std::size_t>(width));
    const std::size_t first = columns.size() - shown;  // the newest columns are kept when there are too many

    // Range on the chosen scale: the options' bounds, or the finite (positive, on a log scale) extremes.
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (std::size_t i = first; i < columns.size(); ++i) {
        const auto& c = columns[i];
        if (c.count == 0) continue;
        const double a = options.log_scale ? (c.min > 0 ? std::log10(c.min) : scaled_max(c, true)) : c.min;
        const double b = scaled_max(c, options.log_scale);
        if (!std::isnan(a)) lo = std::min(lo, a);
        if (!std::isnan(b)) hi = std::max(hi, b);
    }
    const auto scale = [&](double v) { return options.log_scale ? (v > 0 ? std::log10(v) : -HUGE_VAL) : v; };
    if (options.lo && std::isfinite(scale(*options.lo))) lo = scale(*options.lo);
    if (options.hi && std::isfinite(scale(*options.hi))) hi = scale(*options.hi);

    const int pad = width - static_cast<int>(shown);
    for (int i = 0; i < pad; ++i) buf.put(x + i, y, U' ', options.style);
    for (std::size_t i = 0; i < shown; ++i) {
        const auto& c = columns[first + i];
        const int cx = x + pad + static_cast<int>(i);
        const Style style = c.marked ? options.mark_style : options.style;
        if (c.has_nan) {
            buf.put(cx, y, U'!', options.nan_style);
        } else if (c.has_pos_inf) {
            buf.put(cx, y, U'^', options.nan_style);
        } else if (c.has_neg_inf) {
            buf.put(cx, y, U'v', options.nan_style);
        } else if (c.count == 0 && options.unread && c.last_step >= options.unread->first &&
                   c.first_step <= options.unread->second) {
            buf.put(cx, y, glyphs.unicode ? U'\u2591' : U'?', options.unread_style);
        } else if (c.count == 0) {
            buf.put(cx, y, U' ', style);
        } else {
            const int level = level_of(scaled_max(c, options.log_scale), lo, hi);
            buf.put(cx, y, glyphs.unicode ? kBlocks[level] : static_cast<char32_t>(kAsciiRamp[level]), style);
        }
    }
}

}  // namespace msmon::tui
