// Braille line chart: per-pixel-column min/max spans joined by Bresenham lines, axes with readable ticks, a
// legend, a cursor read-out, and NaN/Inf marks on the plot edges. All drawing is clipped to the given
// rectangle.
#include "tui/widgets/braille_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "core/series/step_columns.hpp"

namespace msmon::tui {

namespace {

const Style kMarkStyle{Color::bad, Color::none, kBold};
const Style kAxisStyle{Color::dim, Color::none, kPlain};
const Style kCursorStyle{Color::accent, Color::none, kPlain};

// The buffer seen through the chart's rectangle: coordinates are relative, anything outside is dropped.
class Region {
public:
    Region(ScreenBuffer& buf, int x, int y, int w, int h) : buf_(buf), x_(x), y_(y), w_(w), h_(h) {}
    int width() const { return w_; }
    int height() const { return h_; }
    void put(int cx, int cy, char32_t ch, Style style) {
        if (cx >= 0 && cy >= 0 && cx < w_ && cy < h_) buf_.put(x_ + cx, y_ + cy, ch, style);
    }
    // Text from (cx, cy) clipped to max_width and the rectangle; returns the columns used.
    int text(int cx, int cy, std::string_view s, Style style, int max_width = 1 << 30) {
        if (cx < 0 || cy < 0 || cy >= h_ || cx >= w_) return 0;
        return buf_.text(x_ + cx, y_ + cy, s, style, std::min(max_width, w_ - cx));
    }

private:
    ScreenBuffer& buf_;
    int x_, y_, w_, h_;
};

// "%.{p}g" with the fewest digits that stays within `tolerance` of v; fixed notation for everyday magnitudes
// (120, not 1.2e+02), C's exponent form for tiny and huge ones (1.5e-05).
std::string number_label(double v, double tolerance) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (std::fabs(v) <= tolerance || v == 0) return "0";
    char text[64];
    for (int p = 1; p <= 17; ++p) {
        std::snprintf(text, sizeof text, "%.*g", p, v);
        if (std::fabs(std::strtod(text, nullptr) - v) > tolerance && p < 17) continue;
        const std::string s = text;
        const auto e = s.find('e');
        const double mag = std::fabs(v);
        if (e != std::string::npos && mag >= 1e-4 && mag < 1e6) {
            const int exp10 = std::atoi(s.c_str() + e + 1);
            std::snprintf(text, sizeof text, "%.*f", std::max(0, p - 1 - exp10), v);
        }
        return text;
    }
    return text;
}

// Up to max_count round values ({1, 2, 2.5, 5} × 10^k apart) inside [lo, hi]; `step` gets their spacing.
std::vector<double> nice_ticks(double lo, double hi, int max_count, double& step) {
    std::vector<double> ticks;
    step = hi - lo;
    if (max_count < 2 || !(hi > lo)) return ticks;
    const double raw = (hi - lo) / (max_count - 1);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
        const double s = m * mag;
        if (s < raw * (1 - 1e-9)) continue;
        step = s;
        // Bounded: at huge magnitudes k + 1 may equal k.
        double k = std::ceil(lo / s - 1e-9);
        for (int n = 0; n < max_count && k * s <= hi + s * 1e-9; ++n, k += 1) ticks.push_back(k * s);
        break;
    }
    return ticks;
}

struct Tick {
    double value;  // on the plotted scale (log10 of the value when log_y)
    std::string label;
};

std::vector<Tick> y_ticks(double lo, double hi, int max_count, bool log_y) {
    std::vector<Tick> out;
    if (max_count <= 1 || !(hi > lo)) {
        const double v = log_y ? std::pow(10.0, hi) : hi;
        out.push_back({hi, number_label(v, std::fabs(v) * 1e-3)});
        return out;
    }
    double step = 0;
    if (log_y && hi - lo >= 1) {
        // Whole decades when the range spans at least one.
        std::vector<double> exps = nice_ticks(lo, hi, max_count, step);
        if (step >= 1 && std::floor(step) == step && exps.size() >= 2) {
            for (double e : exps) out.push_back({e, number_label(std::pow(10.0, e), std::pow(10.0, e) * 1e-6)});
            return out;
        }
        exps.clear();
        for (double e = std::ceil(lo); e <= hi && static_cast<int>(exps.size()) < max_count; e += 1) exps.push_back(e);
        if (exps.size() >= 2) {
            for (double e : exps) out.push_back({e, number_label(std::pow(10.0, e), std::pow(10.0, e) * 1e-6)});
            return out;
        }
    }
    if (log_y) {
        // Less than a decade: round values of the data itself, placed on the log scale.
        const double vlo = std::pow(10.0, lo), vhi = std::pow(10.0, hi);
        for (double v : nice_ticks(vlo, vhi, max_count, step))
            if (v > 0) out.push_back({std::log10(v), number_label(v, step * 1e-6)});
        if (out.size() < 2) {
            out.clear();
            for (double t : {lo, (lo + hi) / 2, hi}) {
                const double v = std::pow(10.0, t);
                out.push_back({t, number_label(v, (vhi - vlo) * 0.01)});
            }
        }
        return out;
    }
    for (double v : nice_ticks(lo, hi, max_count, step)) out.push_back({v, number_label(v, step * 1e-6)});
    if (out.size() < 3 && max_count >= 3) {
        out.clear();
        for (double v : {lo, (lo + hi) / 2, hi}) out.push_back({v, number_label(v, (hi - lo) * 0.01)});
    }
    return out;
}

// Readable value for the cursor read-out.
std::string readout_value(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char text[48];
    std::snprintf(text, sizeof text, "%.6g", v);
    return text;
}

// Clips the segment to [0, xmax] × [0, ymax] (Liang–Barsky); false when nothing is left.
bool clip_line(double& x0, double& y0, double& x1, double& y1, double xmax, double ymax) {
    double t0 = 0, t1 = 1;
    const double dx = x1 - x0, dy = y1 - y0;
    const double p[4] = {-dx, dx, -dy, dy};
    const double q[4] = {x0, xmax - x0, y0, ymax - y0};
    for (int i = 0; i < 4; ++i) {
        if (p[i] == 0) {
            if (q[i] < 0) return false;
            continue;
        }
        const double r = q[i] / p[i];
        if (p[i] < 0) t0 = std::max(t0, r);
        else t1 = std::min(t1, r);
        if (t0 > t1) return false;
    }
    const double nx0 = x0 + t0 * dx, ny0 = y0 + t0 * dy;
    x1 = x0 + t1 * dx, y1 = y0 + t1 * dy;
    x0 = nx0, y0 = ny0;
    return true;
}

enum PixelKind : std::uint8_t { kLinePixel = 1, kSpanPixel = 2 };

// The plot area's pixels: Braille gives 2×4 per cell, ASCII one per cell. A cell keeps the style of the last
// series that drew in it.
class Canvas {
public:
    Canvas(int cells_w, int cells_h, bool braille)
        : cw_(cells_w),
          ch_(cells_h),
          braille_(braille),
          dots_(static_cast<std::size_t>(cells_w * cells_h)),
          kind_(dots_.size()),
          style_(dots_.size()) {}
    int px_w() const { return cw_ * (braille_ ? 2 : 1); }
    int px_h() const { return ch_ * (braille_ ? 4 : 1); }
    int cell_w() const { return braille_ ? 2 : 1; }
    int cells_h() const { return ch_; }

    void set(int px, int py, PixelKind kind, Style style) {
        if (px < 0 || py < 0 || px >= px_w() || py >= px_h()) return;
        const std::size_t i = braille_ ? cell(px / 2, py / 4) : cell(px, py);
        if (braille_) {
            static constexpr std::uint8_t kBits[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};
            dots_[i] |= kBits[px % 2][py % 4];
        } else {
            dots_[i] = 1;
        }
        kind_[i] |= kind;
        style_[i] = style;
    }
    void line(int x0, int y0, int x1, int y1, Style style) {
        const int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0);
        const int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
        int err = dx + dy;
        while (true) {
            set(x0, y0, kLinePixel, style);
            if (x0 == x1 && y0 == y1) break;
            const int e2 = 2 * err;
            if (e2 >= dy) err += dy, x0 += sx;
            if (e2 <= dx) err += dx, y0 += sy;
        }
    }
    bool empty(int cx, int cy) const { return dots_[cell(cx, cy)] == 0; }
    char32_t glyph(int cx, int cy) const {
        const std::size_t i = cell(cx, cy);
        if (braille_) return U'\u2800' + dots_[i];
        return (kind_[i] & kLinePixel) ? U'*' : U'|';
    }
    Style style(int cx, int cy) const { return style_[cell(cx, cy)]; }

private:
    std::size_t cell(int cx, int cy) const { return static_cast<std::size_t>(cy * cw_ + cx); }
    int cw_, ch_;
    bool braille_;
    std::vector<std::uint8_t> dots_, kind_;
    std::vector<Style> style_;
};

// Maps steps and values to pixels; values on the plotted scale (log10 when log_y).
struct Scale {
    std::int64_t step_lo, step_hi;
    double y_lo, y_hi;
    bool log_y;
    int px_w, px_h;

    StepColumns split;     // of [step_lo, step_hi] on px_w columns: the one every store's reduction uses
    bool clipped = false;  // a robust range: values may lie beyond it
    char32_t up_mark = U'↑', down_mark = U'↓';
    std::optional<std::pair<std::int64_t, std::int64_t>> unread;  // steps not read yet

    // Whether a step strictly between a and b (a < b) is unread: a line from a to b would draw over it.
    bool unread_between(std::int64_t a, std::int64_t b) const {
        if (!unread || b - a < 2) return false;
        return std::max(a + 1, unread->first) <= std::min(b - 1, unread->second);
    }

    int column(std::int64_t step) const { return static_cast<int>(split.column(step)); }
    double x_outside(std::int64_t step) const {
        const double span = static_cast<double>(step_hi) - static_cast<double>(step_lo) + 1;
        return (static_cast<double>(step) - static_cast<double>(step_lo)) * px_w / span;
    }
    bool plotted(double v) const { return std::isfinite(v) && (!log_y || v > 0); }
    // Halved terms: the range of ±1e308 values does not overflow.
    double y(double v) const {
        const double t = log_y ? std::log10(v) : v;
        return (y_hi / 2 - t / 2) / (y_hi / 2 - y_lo / 2) * (px_h - 1);
    }
};

// NaN and Inf per cell column, drawn on the plot edges after every series.
struct EdgeMarks {
    std::vector<char32_t> top, bottom;
};

// What one pixel column of one segment holds.
struct PixelColumn {
    int px = 0;
    int count = 0;
    double min = 0, max = 0, first = 0, last = 0;
};

class SeriesPainter {
public:
    SeriesPainter(Canvas& canvas, const Scale& scale, EdgeMarks& marks, Style style)
        : canvas_(canvas), scale_(scale), marks_(marks), style_(style) {}

    void paint(const std::vector<SeriesPoint>& points) {
        for (std::size_t i = 0; i < points.size(); ++i) {
            // A restart, or steps not read yet between two points: the line does not bridge them.
            if (i > 0 &&
                (points[i].step < points[i - 1].step || scale_.unread_between(points[i - 1].step, points[i].step)))
                end_segment(nullptr);
            add(points[i]);
        }
        end_segment(nullptr);
    }

private:
    void add(const SeriesPoint& p) {
        const bool visible = p.step >= scale_.step_lo && p.step <= scale_.step_hi;
        if (visible && !std::isfinite(p.value)) {
            const auto cx = static_cast<std::size_t>(scale_.column(p.step) / canvas_.cell_w());
            if (std::isnan(p.value)) marks_.top[cx] = U'!';
            else if (p.value > 0 && marks_.top[cx] != U'!') marks_.top[cx] = U'^';
            else if (p.value < 0) marks_.bottom[cx] = U'v';
        }
        if (!scale_.plotted(p.value)) return;
        if (visible && scale_.clipped) {  // beyond a robust range: marked on the edge it leaves by
            const auto cx = static_cast<std::size_t>(scale_.column(p.step) / canvas_.cell_w());
            const double t = scale_.y(p.value);
            if (t < -0.5 && !marks_.top[cx]) marks_.top[cx] = scale_.up_mark;
            if (t > scale_.px_h - 0.5 && !marks_.bottom[cx]) marks_.bottom[cx] = scale_.down_mark;
        }
        if (p.step < scale_.step_lo) {
            before_ = p;  // the line into the plot starts from the last point left of it
            return;
        }
        if (p.step > scale_.step_hi) {
            end_segment(&p);
            return;
        }
        const int px = scale_.column(p.step);
        if (col_.count > 0 && col_.px != px) flush();
        if (col_.count == 0) {
            col_ = PixelColumn{px, 0, p.value, p.value, p.value, p.value};
        } else {
            col_.min = std::min(col_.min, p.value), col_.max = std::max(col_.max, p.value);
            col_.last = p.value;
        }
        ++col_.count;
    }

    // Draws the pending column: the vertical span of its values, and the line from the previous column.
    void flush() {
        const double top = scale_.y(col_.max), bottom = scale_.y(col_.min);
        const double x = col_.px;
        if (prev_) {
            line(prev_->first, prev_->second, x, scale_.y(col_.first));
        } else if (before_) {
            line(scale_.x_outside(before_->step), scale_.y(before_->value), x, scale_.y(col_.first));
        }
        const double limit = scale_.px_h - 1;
        if (bottom >= 0 && top <= limit) {
            const int y0 = static_cast<int>(std::lround(std::max(top, 0.0)));
            const int y1 = static_cast<int>(std::lround(std::min(bottom, limit)));
            const PixelKind kind = col_.min == col_.max ? kLinePixel : kSpanPixel;
            for (int y = y0; y <= y1; ++y) canvas_.set(col_.px, y, kind, style_);
        }
        prev_ = {x, scale_.y(col_.last)};
        col_.count = 0;
        before_.reset();
    }

    // Ends the segment at a restart or where it leaves the plot (`after`: its first point right of it).
    void end_segment(const SeriesPoint* after) {
        if (col_.count > 0) flush();
        if (after && prev_) {
            line(prev_->first, prev_->second, scale_.x_outside(after->step), scale_.y(after->value));
        } else if (after && before_) {  // a line across the whole plot with no point inside it
            line(scale_.x_outside(before_->step), scale_.y(before_->value), scale_.x_outside(after->step),
                 scale_.y(after->value));
        }
        prev_.reset();
        before_.reset();
    }

    void line(double x0, double y0, double x1, double y1) {
        if (!std::isfinite(x0) || !std::isfinite(y0) || !std::isfinite(x1) || !std::isfinite(y1)) return;
        if (!clip_line(x0, y0, x1, y1, scale_.px_w - 1, scale_.px_h - 1)) return;
        canvas_.line(static_cast<int>(std::lround(x0)), static_cast<int>(std::lround(y0)),
                     static_cast<int>(std::lround(x1)), static_cast<int>(std::lround(y1)), style_);
    }

    Canvas& canvas_;
    const Scale& scale_;
    EdgeMarks& marks_;
    Style style_;
    PixelColumn col_;
    std::optional<std::pair<double, double>> prev_;  // pixel where the previous column's line leaves
    std::optional<SeriesPoint> before_;
};

// Default y range: finite (positive, for log) extremes of the visible points, padded when flat; with a clip
// fraction, the values at those quantiles instead.
std::pair<double, double> y_range(const std::vector<ChartSeries>& series, const ChartOptions& o, std::int64_t lo,
                                  std::int64_t hi) {
    double ylo = std::numeric_limits<double>::infinity(), yhi = -ylo;
    std::vector<double> all;
    for (const auto& s : series)
        for (const auto& p : s.points) {
            if (p.step < lo || p.step > hi || !std::isfinite(p.value) || (o.log_y && p.value <= 0)) continue;
            const double t = o.log_y ? std::log10(p.value) : p.value;
            ylo = std::min(ylo, t), yhi = std::max(yhi, t);
            if (o.clip_fraction > 0) all.push_back(t);
        }
    // Each end loses floor(f * n) values (none while that is 0): 2% of 51 values cuts the top one and the bottom one.
    const double f = std::clamp(o.clip_fraction, 0.0, 0.25);
    const auto cut = static_cast<std::size_t>(std::floor(f * static_cast<double>(all.size())));
    if (cut > 0) {
        const auto at = [&](std::size_t k) {
            std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end());
            return all[k];
        };
        ylo = at(cut);
        yhi = at(all.size() - 1 - cut);
    }
    const auto given = [&](const std::optional<double>& v, double& out) {
        if (v && std::isfinite(*v) && (!o.log_y || *v > 0)) out = o.log_y ? std::log10(*v) : *v;
    };
    given(o.y_lo, ylo);
    given(o.y_hi, yhi);
    if (!std::isfinite(ylo) && !std::isfinite(yhi)) ylo = 0, yhi = 1;
    if (!std::isfinite(ylo)) ylo = yhi - 1;
    if (!std::isfinite(yhi)) yhi = ylo + 1;
    if (ylo > yhi) std::swap(ylo, yhi);
    if (ylo == yhi) {
        const double pad = (o.log_y || ylo == 0) ? 1 : std::fabs(ylo) * 0.1;
        ylo -= pad, yhi += pad;
    }
    return {ylo, yhi};
}

// The value a series shows at the cursor: its latest point at or before that step.
std::optional<double> value_at(const std::vector<SeriesPoint>& points, std::int64_t step) {
    std::optional<SeriesPoint> best;
    for (const auto& p : points)
        if (p.step <= step && (!best || p.step >= best->step)) best = p;
    if (!best) return std::nullopt;
    return best->value;
}

std::string step_label(std::int64_t step) {
    return std::to_string(step);
}

// The cursor read-out as pieces of text in their styles: "step S:", then " label=value" for each series.
std::vector<std::pair<std::string, Style>> cursor_readout(const std::vector<ChartSeries>& series, std::int64_t step,
                                                          const std::string& name) {
    std::vector<std::pair<std::string, Style>> out;
    out.emplace_back((name.empty() ? "step " + std::to_string(step) : name) + ":", kCursorStyle);
    for (const auto& s : series) {
        if (s.stretch && (s.points.empty() || step < s.points.front().step || step > s.points.back().step)) continue;
        const auto v = value_at(s.points, step);
        Style style = s.style;
        if (s.faint) style.attr |= kDim;
        out.emplace_back(" ", Style{});
        out.emplace_back(s.label, style);
        out.emplace_back("=" + (v ? readout_value(*v) : std::string("-")), Style{});
    }
    return out;
}

}  // namespace

// A cell column whose steps reach into the unread span and where nothing is drawn: shaded, top to bottom.
void shade_unread(Region& region, const Canvas& canvas, const Scale& scale, const EdgeMarks& marks, int plot_x,
                  int plot_y, const Glyphs& glyphs) {
    if (!scale.unread) return;
    const Style unread_style{Color::dim, Color::none, kPlain};
    const int cell_w = canvas.cell_w();
    for (int cx = 0; cx * cell_w < scale.px_w; ++cx) {
        const auto i = static_cast<std::size_t>(cx);
        if (i < marks.top.size() && (marks.top[i] || marks.bottom[i])) continue;
        const int last_px = std::min(scale.px_w, (cx + 1) * cell_w) - 1;
        if (scale.split.last_step(last_px) < scale.unread->first ||
            scale.split.first_step(cx * cell_w) > scale.unread->second)
            continue;
        bool empty = true;
        for (int cy = 0; cy < canvas.cells_h() && empty; ++cy) empty = canvas.empty(cx, cy);
        if (!empty) continue;
        for (int cy = 0; cy < canvas.cells_h(); ++cy)
            region.put(plot_x + cx, plot_y + cy, glyphs.unicode ? U'\u2591' : U'?', unread_style);
    }
}

int draw_chart(ScreenBuffer& buf, int x, int y, int width, int height, const std::vector<ChartSeries>& series,
               const ChartOptions& options, const Glyphs& glyphs) {
    if (width <= 0 || height <= 0) return 0;
    Region region(buf, x, y, width, height);
    for (int row = 0; row < height; ++row)
        for (int col = 0; col < width; ++col) region.put(col, row, U' ', {});

    std::int64_t step_lo = std::min(options.step_lo, options.step_hi);
    std::int64_t step_hi = std::max(options.step_lo, options.step_hi);

    // Rows, dropped in this order when the plot would get fewer than two: legend, axis line, the read-out's own
    // row, title, x labels. The cursor read-out follows the title, or gets a row of its own under it when both do
    // not fit on one (a drill-down's title names a whole tensor; the read-out is what the person came to see).
    bool any_label = false;
    for (const auto& s : series) any_label = any_label || !s.label.empty();
    std::vector<std::pair<std::string, Style>> readout;
    int readout_w = 0;
    if (options.cursor_step) readout = cursor_readout(series, *options.cursor_step, options.cursor_label);
    for (const auto& piece : readout) readout_w += display_width(piece.first);
    int title_rows = (!options.title.empty() || options.cursor_step) ? 1 : 0;
    int readout_rows =
        !readout.empty() && !options.title.empty() && display_width(options.title) + 2 + readout_w > width ? 1 : 0;
    int legend_rows = any_label ? 1 : 0, axis_rows = 1, label_rows = 1;
    const auto plot_rows = [&] { return height - title_rows - readout_rows - legend_rows - axis_rows - label_rows; };
    for (int* drop : {&legend_rows, &axis_rows, &readout_rows, &title_rows, &label_rows})
        if (plot_rows() < 2) *drop = 0;
    const int plot_h = plot_rows();
    if (plot_h < 1) return 0;
    const int plot_y = title_rows + readout_rows;

    const auto range = y_range(series, options, step_lo, step_hi);
    const double ylo = range.first, yhi = range.second;
    const int px_h_per_cell = glyphs.unicode ? 4 : 1;
    auto ticks = y_ticks(ylo, yhi, std::clamp((plot_h + 1) / 2, 1, 5), options.log_y);
    int label_w = 0;
    for (const auto& t : ticks) label_w = std::max(label_w, display_width(t.label));
    const bool y_axis = width - (label_w + 1) >= 2;
    const int plot_x = y_axis ? label_w + 1 : 0;
    const int plot_w = width - plot_x;

    Canvas canvas(plot_w, plot_h, glyphs.unicode);
    const StepColumns split(step_lo, step_hi, canvas.px_w());
    const Scale scale{step_lo,
                      step_hi,
                      ylo,
                      yhi,
                      options.log_y,
                      canvas.px_w(),
                      canvas.px_h(),
                      split,
                      options.clip_fraction > 0,
                      glyphs.unicode ? U'↑' : U'\'',
                      glyphs.unicode ? U'↓' : U',',
                      options.unread};
    const auto cell_row = [&](double t) {
        const double py = (yhi / 2 - t / 2) / (yhi / 2 - ylo / 2) * (scale.px_h - 1);
        return std::isfinite(py) ? static_cast<int>(std::lround(py)) / px_h_per_cell : 0;
    };

    // Faint series first (dim), so the lines that matter are drawn over them.
    EdgeMarks marks{std::vector<char32_t>(static_cast<std::size_t>(plot_w), 0),
                    std::vector<char32_t>(static_cast<std::size_t>(plot_w), 0)};
    for (bool faint_pass : {true, false})
        for (const auto& s : series) {
            if (s.faint != faint_pass) continue;
            Style style = s.style;
            if (s.faint) style.attr |= kDim;
            SeriesPainter(canvas, scale, marks, style).paint(s.points);
        }
    for (int cy = 0; cy < plot_h; ++cy)
        for (int cx = 0; cx < plot_w; ++cx)
            if (!canvas.empty(cx, cy)) region.put(plot_x + cx, plot_y + cy, canvas.glyph(cx, cy), canvas.style(cx, cy));
    shade_unread(region, canvas, scale, marks, plot_x, plot_y, glyphs);

    const bool cursor_visible =
        options.cursor_step && *options.cursor_step >= step_lo && *options.cursor_step <= step_hi;
    if (cursor_visible) {
        const int cx = scale.column(*options.cursor_step) / canvas.cell_w();
        for (int cy = 0; cy < plot_h; ++cy)
            if (canvas.empty(cx, cy)) region.put(plot_x + cx, plot_y + cy, glyphs.unicode ? U'│' : U'|', kCursorStyle);
    }
    for (int cx = 0; cx < plot_w; ++cx) {
        const auto i = static_cast<std::size_t>(cx);
        if (marks.top[i]) region.put(plot_x + cx, plot_y, marks.top[i], kMarkStyle);
        if (marks.bottom[i]) region.put(plot_x + cx, plot_y + plot_h - 1, marks.bottom[i], kMarkStyle);
    }

    // Y axis: labels right-aligned against a vertical line with ticks.
    if (y_axis) {
        for (int cy = 0; cy < plot_h; ++cy) region.put(label_w, plot_y + cy, glyphs.unicode ? U'│' : U'|', kAxisStyle);
        int last_row = -1;
        for (const auto& t : ticks) {
            const int row = std::clamp(cell_row(t.value), 0, plot_h - 1);
            if (row == last_row) continue;
            last_row = row;
            region.text(label_w - display_width(t.label), plot_y + row, t.label, kAxisStyle);
            region.put(label_w, plot_y + row, glyphs.unicode ? U'┤' : U'+', kAxisStyle);
        }
    }

    // X axis: a line with tick marks, step labels under it.
    const int axis_y = plot_y + plot_h;
    const int labels_y = axis_y + axis_rows;
    if (axis_rows) {
        if (y_axis) region.put(label_w, axis_y, glyphs.unicode ? U'└' : U'+', kAxisStyle);
        for (int cx = 0; cx < plot_w; ++cx) region.put(plot_x + cx, axis_y, glyphs.unicode ? U'─' : U'-', kAxisStyle);
    }
    const auto label_of = [&](std::int64_t s) { return options.x_label ? options.x_label(s) : step_label(s); };
    if (label_rows || axis_rows) {
        const int widest = std::max(display_width(label_of(step_lo)), display_width(label_of(step_hi)));
        const int max_count = std::clamp(plot_w / (widest + 2), 1, 6);
        double step = 0;
        std::vector<double> xt =
            nice_ticks(static_cast<double>(step_lo), static_cast<double>(step_hi), max_count, step);
        if (step < 1 || xt.empty()) xt = {static_cast<double>(step_lo)};
        int last_end = -2;
        for (double t : xt) {
            const auto s = static_cast<std::int64_t>(std::llround(t));
            if (s < step_lo || s > step_hi) continue;
            const int cx = scale.column(s) / canvas.cell_w();
            const std::string label = label_of(s);
            const int w = display_width(label);
            const int start = std::clamp(cx - w / 2, 0, std::max(plot_w - w, 0));
            if (start <= last_end + 1) continue;
            if (axis_rows && options.x_marks.empty())
                region.put(plot_x + cx, axis_y, glyphs.unicode ? U'┬' : U'+', kAxisStyle);
            if (label_rows) region.text(plot_x + start, labels_y, label, kAxisStyle, plot_w - start);
            last_end = start + w - 1;
        }
    }

    // Marks on the axis line (a clipped pause), over the ticks.
    if (axis_rows)
        for (const std::int64_t m : options.x_marks)
            if (m >= step_lo && m <= step_hi)
                region.put(plot_x + scale.column(m) / canvas.cell_w(), axis_y, glyphs.unicode ? U'≈' : U'~',
                           kAxisStyle);

    // Legend: each label in its series' colour.
    if (legend_rows) {
        int cx = 0;
        for (const auto& s : series) {
            if (s.label.empty() || cx >= width) continue;
            Style style = s.style;
            if (s.faint) style.attr |= kDim;
            if (cx > 0) cx += 2;
            cx += region.text(cx, labels_y + label_rows, s.label, style);
        }
    }

    // Title row: the title, then the cursor read-out (on the next row when it has one).
    if (title_rows) {
        int cx = options.title.empty() ? 0 : region.text(0, 0, options.title, {Color::none, Color::none, kBold});
        int row = 0;
        if (readout_rows) {
            cx = 0;
            row = 1;
        } else if (cx > 0) {
            cx += 2;
        }
        // "step S:" and the focused series always (cut only by the width itself); each other series whole or not
        // at all, and then how many were left out: " +3", never half a value.
        const std::size_t series_count = (readout.size() - 1) / 3;
        for (std::size_t i = 0; i < readout.size() && cx < width; ++i) {
            const std::size_t group = i == 0 ? 0 : (i - 1) / 3;  // which series this piece is of
            if (i > 0 && group > 0 && (i - 1) % 3 == 0) {
                int need = 0;
                for (std::size_t k = i; k < i + 3; ++k) need += display_width(readout[k].first);
                const std::size_t left_after = series_count - group - 1;
                const int more_w = left_after ? 2 + static_cast<int>(std::to_string(left_after).size()) : 0;
                if (cx + need + more_w > width) {
                    region.text(cx, row, " +" + std::to_string(series_count - group), kAxisStyle);
                    break;
                }
            }
            cx += region.text(cx, row, readout[i].first, readout[i].second);
        }
    }
    return canvas.px_w();
}

std::vector<SeriesPoint> smooth_debiased_ema(const std::vector<SeriesPoint>& points, double weight) {
    std::vector<SeriesPoint> out = points;
    if (points.empty()) return out;
    if (!(weight > 0)) return out;
    weight = std::min(weight, 0.999999);
    // As TensorBoard: a constant series is left as is (no rounding drift).
    const bool constant = std::all_of(points.begin(), points.end(),
                                      [&](const SeriesPoint& p) { return p.value == points.front().value; });
    if (constant) return out;
    double last = 0;
    int accumulated = 0;
    for (auto& p : out) {
        if (!std::isfinite(p.value)) continue;
        last = last * weight + (1 - weight) * p.value;
        ++accumulated;
        p.value = last / (1 - std::pow(weight, accumulated));
    }
    return out;
}

}  // namespace msmon::tui
