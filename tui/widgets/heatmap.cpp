// Heatmap of ranks × steps: heat0..heat7 as background, or the ASCII ramp without colour; NaN/Inf as marks.
#include "tui/widgets/heatmap.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace msmon::tui {

namespace {

constexpr char kRamp[8] = {' ', '.', ':', '-', '=', '+', '*', '#'};
constexpr Color kHeat[8] = {Color::heat0, Color::heat1, Color::heat2, Color::heat3,
                            Color::heat4, Color::heat5, Color::heat6, Color::heat7};

// The value on the colour scale (log10 when log_scale); NaN when it has none there.
double scaled(double v, bool log_scale) {
    if (!log_scale) return v;
    return v > 0 ? std::log10(v) : std::numeric_limits<double>::quiet_NaN();
}

int level_of(double t, double lo, double hi) {
    if (std::isnan(t)) return 0;  // non-positive on a log scale
    if (!(hi > lo)) return 3;     // every cell equal: mid colour
    return std::clamp(static_cast<int>(std::floor((t - lo) / (hi - lo) * 8)), 0, 7);
}

// Several ranks on one screen row: the max of their columns, flags OR-ed, so an outlier rank shows.
void merge_into(ColumnStat& into, const ColumnStat& c) {
    if (c.count > 0) {
        if (into.count == 0) {
            into.min = c.min, into.max = c.max;
        } else {
            into.min = std::min(into.min, c.min), into.max = std::max(into.max, c.max);
        }
        into.count += c.count;
    }
    into.has_nan = into.has_nan || c.has_nan;
    into.has_pos_inf = into.has_pos_inf || c.has_pos_inf;
    into.has_neg_inf = into.has_neg_inf || c.has_neg_inf;
    into.marked = into.marked || c.marked;
}

}  // namespace

void draw_heatmap(ScreenBuffer& buf, int x, int y, int width, int height,
                  const std::vector<std::vector<ColumnStat>>& rows, const Glyphs& glyphs,
                  const HeatmapOptions& options) {
    if (width <= 0 || height <= 0) return;
    buf.fill(x, y, width, height, U' ');
    if (rows.empty()) return;

    // Colour range on the chosen scale: the options' bounds or the finite (positive for log) extremes.
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto& row : rows)
        for (const auto& c : row) {
            if (c.count == 0) continue;
            const double a = scaled(c.min, options.log_scale), b = scaled(c.max, options.log_scale);
            if (!std::isnan(a)) lo = std::min(lo, a);
            if (!std::isnan(b)) lo = std::min(lo, b), hi = std::max(hi, b);
        }
    if (options.lo && std::isfinite(scaled(*options.lo, options.log_scale))) lo = scaled(*options.lo, options.log_scale);
    if (options.hi && std::isfinite(scaled(*options.hi, options.log_scale))) hi = scaled(*options.hi, options.log_scale);

    const bool use_colour = glyphs.color && glyphs.unicode;
    const int screen_rows = std::min(height, static_cast<int>(rows.size()));
    const auto n_rows = static_cast<long long>(rows.size());
    std::vector<ColumnStat> merged;
    for (int r = 0; r < screen_rows; ++r) {
        // Screen row r shows ranks [r*n/h, (r+1)*n/h): every rank lands on exactly one row.
        const auto first = static_cast<std::size_t>(r * n_rows / screen_rows);
        const auto last = static_cast<std::size_t>((r + 1) * n_rows / screen_rows);
        merged = rows[first];
        for (std::size_t i = first + 1; i < last; ++i) {
            const auto& other = rows[i];
            for (std::size_t c = 0; c < merged.size() && c < other.size(); ++c) merge_into(merged[c], other[c]);
        }
        // Right-aligned like the sparklines: the newest column at the right edge.
        const std::size_t shown = std::min(merged.size(), static_cast<std::size_t>(width));
        const std::size_t skip = merged.size() - shown;
        const int x0 = x + width - static_cast<int>(shown);
        for (std::size_t i = 0; i < shown; ++i) {
            const auto& c = merged[skip + i];
            const int cx = x0 + static_cast<int>(i);
            if (c.has_nan || c.has_pos_inf || c.has_neg_inf) {
                const char32_t mark = c.has_nan ? U'!' : c.has_pos_inf ? U'^' : U'v';
                buf.put(cx, y + r, mark, {Color::bad, Color::none, kBold});
            } else if (c.count > 0) {
                const int level = level_of(scaled(c.max, options.log_scale), lo, hi);
                if (use_colour) buf.put(cx, y + r, U' ', {Color::none, kHeat[level], kPlain});
                else buf.put(cx, y + r, static_cast<char32_t>(kRamp[level]), {});
            }
        }
    }
}

}  // namespace msmon::tui
