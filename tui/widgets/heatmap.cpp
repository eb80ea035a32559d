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

// What one screen cell shows: the max over the ranks sharing the row, flags OR-ed, so an outlier rank shows.
struct MergedCell {
    double max = 0;
    bool any = false, nan = false, pos_inf = false, neg_inf = false;

    void add(const ColumnStat& c) {
        if (c.count > 0) max = any ? std::max(max, c.max) : c.max, any = true;
        nan = nan || c.has_nan;
        pos_inf = pos_inf || c.has_pos_inf;
        neg_inf = neg_inf || c.has_neg_inf;
    }
};

}  // namespace

std::size_t heatmap_first_row(std::size_t r, std::size_t rows, int height) {
    const std::size_t screen_rows = std::min(static_cast<std::size_t>(std::max(height, 1)), rows);
    return screen_rows == 0 ? 0 : r * rows / screen_rows;
}

int draw_heatmap_scale(ScreenBuffer& buf, int x, int y, const Glyphs& glyphs) {
    for (int level = 0; level < 8; ++level) {
        if (glyphs.color && glyphs.unicode) buf.put(x + level, y, U' ', {Color::none, kHeat[level], kPlain});
        else buf.put(x + level, y, static_cast<char32_t>(kRamp[level]), {});
    }
    return 8;
}

std::optional<HeatmapRange> draw_heatmap(ScreenBuffer& buf, int x, int y, int width, int height,
                                         const std::vector<std::vector<ColumnStat>>& rows, const Glyphs& glyphs,
                                         const HeatmapOptions& options) {
    if (width <= 0 || height <= 0) return std::nullopt;
    buf.fill(x, y, width, height, U' ');
    if (rows.empty()) return std::nullopt;

    // Right-aligned like the sparklines: the newest column at the right edge, older ones cut when too many.
    const std::size_t n_cols = rows.front().size();
    const std::size_t shown = std::min(n_cols, static_cast<std::size_t>(width));
    const std::size_t skip = n_cols - shown;

    // Colour range: the options' bounds, or the finite (positive, for log) extremes of the shown columns.
    // log10 is monotonic, so the extremes are found on values and scaled once.
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto& row : rows)
        for (std::size_t i = skip; i < row.size(); ++i) {
            const auto& c = row[i];
            if (c.count == 0) continue;
            const double low = options.log_scale && c.min <= 0 ? c.max : c.min;
            if (!options.log_scale || low > 0) lo = std::min(lo, low);
            if (!options.log_scale || c.max > 0) hi = std::max(hi, c.max);
        }
    lo = scaled(lo, options.log_scale), hi = scaled(hi, options.log_scale);
    if (options.lo && std::isfinite(scaled(*options.lo, options.log_scale)))
        lo = scaled(*options.lo, options.log_scale);
    if (options.hi && std::isfinite(scaled(*options.hi, options.log_scale)))
        hi = scaled(*options.hi, options.log_scale);

    const bool use_colour = glyphs.color && glyphs.unicode;
    const int screen_rows = std::min(height, static_cast<int>(rows.size()));
    const int x0 = x + width - static_cast<int>(shown);
    std::vector<MergedCell> merged(shown);
    for (int r = 0; r < screen_rows; ++r) {
        // Screen row r shows ranks [r*n/h, (r+1)*n/h): every rank lands on exactly one row.
        const std::size_t first = heatmap_first_row(static_cast<std::size_t>(r), rows.size(), height);
        const std::size_t last = heatmap_first_row(static_cast<std::size_t>(r) + 1, rows.size(), height);
        std::fill(merged.begin(), merged.end(), MergedCell{});
        for (std::size_t i = first; i < last; ++i) {
            const auto& row = rows[i];
            const std::size_t end = std::min(row.size(), n_cols);
            for (std::size_t k = skip; k < end; ++k) merged[k - skip].add(row[k]);
        }
        for (std::size_t k = 0; k < shown; ++k) {
            const auto& c = merged[k];
            const int cx = x0 + static_cast<int>(k);
            if (c.nan || c.pos_inf || c.neg_inf) {
                buf.put(cx, y + r, c.nan ? U'!' : c.pos_inf ? U'^' : U'v', {Color::bad, Color::none, kBold});
            } else if (c.any) {
                const int level = level_of(scaled(c.max, options.log_scale), lo, hi);
                if (use_colour) buf.put(cx, y + r, U' ', {Color::none, kHeat[level], kPlain});
                else buf.put(cx, y + r, static_cast<char32_t>(kRamp[level]), {});
            }
        }
    }
    if (!(hi >= lo) || !std::isfinite(lo) || !std::isfinite(hi)) return std::nullopt;
    const auto value = [&](double t) { return options.log_scale ? std::pow(10.0, t) : t; };
    return HeatmapRange{value(lo), value(hi)};
}

}  // namespace msmon::tui
