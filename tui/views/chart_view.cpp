// Chart view: reads every rank's series for the shared selection; draws the focused rank bright, up to eight
// others faint, via draw_chart.
#include "tui/views/chart_view.hpp"

#include <algorithm>
#include <cmath>

#include "tui/widgets/step_math.hpp"

namespace msmon::tui {

namespace {

constexpr double kSmoothing[] = {0.0, 0.6, 0.9, 0.99};

// How the name filter reads in the title: a drill-down's exact-name pattern (^name$, specials escaped) as the
// tensor's name, anything else as /regex/.
std::string filter_title(const std::string& regex) {
    const std::string_view specials = "\\^$.|?*+()[]{}";
    if (regex.size() >= 2 && regex.front() == '^' && regex.back() == '$') {
        std::string name;
        bool exact = true;
        for (std::size_t i = 1; i + 1 < regex.size() && exact; ++i) {
            const char c = regex[i];
            if (c == '\\' && i + 2 < regex.size() && specials.find(regex[i + 1]) != std::string_view::npos)
                name.push_back(regex[++i]);
            else if (specials.find(c) != std::string_view::npos) exact = false;
            else name.push_back(c);
        }
        if (exact) return name;
    }
    return "/" + regex + "/";
}

std::vector<SeriesPoint> to_points(const std::vector<StepValue>& in) {
    std::vector<SeriesPoint> out;
    out.reserve(in.size());
    for (const auto& p : in) out.push_back({p.step, p.value});
    return out;
}

}  // namespace

ChartView::ChartView(SharedSelection& shared) : shared_(shared) {
    // One binding per line reads as a table.
    // clang-format off
    keys_ = {
        {{'+', '='}, "+", "zoom in (around the cursor or the centre)", [this] { return zoom(0.5); }},
        {{'-'}, "-", "zoom out", [this] { return zoom(2.0); }},
        {{'0'}, "0", "show every step", [this] {
             zoomed_ = false;
             lo_ = data_lo_;
             hi_ = data_hi_;
             return moved();
         }},
        {{kKeyLeft, 'h'}, "h/Left", "pan left", [this] { return pan(-0.25); }},
        {{kKeyRight, 'l'}, "l/Right", "pan right", [this] { return pan(0.25); }},
        {{','}, ",", "cursor one step left", [this] {
             cursor_ = std::max(lo_, sat_sub(cursor_.value_or(hi_), std::max<std::int64_t>(1, sat_sub(hi_, lo_) / 100)));
             return moved();
         }},
        {{'.'}, ".", "cursor one step right", [this] {
             cursor_ = std::min(hi_, sat_add(cursor_.value_or(lo_), std::max<std::int64_t>(1, sat_sub(hi_, lo_) / 100)));
             return moved();
         }},
        {{'L'}, "L", "log scale on the y axis", [this] {
             log_y_ = !log_y_;
             return Reaction::redraw;
         }},
        {{'e'}, "e", "smoothing: off, 0.6, 0.9, 0.99 (debiased EMA; the raw line stays faint)", [this] {
             smoothing_ = (smoothing_ + 1) % 4;
             return Reaction::reload;  // smoothing reads every step; without it, only what draws
         }},
        {{'a'}, "a", "show or hide the other ranks (faint)", [this] {
             others_ = !others_;
             return Reaction::redraw;
         }},
        {{'n'}, "n", "next anomaly of this series (after a drill-down)", [this] { return jump_anomaly(1); }},
        {{'N'}, "N", "previous anomaly of this series", [this] { return jump_anomaly(-1); }},
        {{'r'}, "r", "next rank", [this] { return next_rank(1); }},
        {{'R'}, "R", "previous rank", [this] { return next_rank(-1); }},
    };
    // clang-format on
}

void ChartView::collect(Reader& reader) {
    if (drilled_ && !shared_.drill) {  // the drill-down's window and cursor were for its step, not for this
        zoomed_ = false;
        cursor_.reset();
    }
    drilled_ = shared_.drill.has_value();
    // A new drill-down is looked at as it is: log-y and smoothing chosen for an earlier one do not carry over.
    if (shared_.drills != drills_seen_) {
        drills_seen_ = shared_.drills;
        log_y_ = false;
        smoothing_ = 0;
    }
    SeriesSelection& sel = shared_.chart_series();
    if (sel.kind.empty()) sel = default_selection(reader.catalog());
    if (shared_.focus_step) {  // drill-down: the extent first, then a window around that step
        read(reader, false);
        const std::int64_t half = std::max<std::int64_t>(10, sat_sub(data_hi_, data_lo_) / 10);
        lo_ = std::max(data_lo_, sat_sub(*shared_.focus_step, half));
        hi_ = std::min(data_hi_, sat_add(*shared_.focus_step, half));
        cursor_ = shared_.focus_step;
        zoomed_ = true;
        shared_.focus_step.reset();
    }
    read(reader, zoomed_);
    if (shared_.chart_rank() < 0 && !series_.empty()) shared_.chart_rank() = series_.front().rank;
    if (!zoomed_) {
        lo_ = data_lo_;
        hi_ = data_hi_;
    }
}

// Only what draws on the plot's pixel columns (the width of the last frame; a guess before the first), over the
// zoomed range or the whole extent; every step when smoothing, which needs them all.
void ChartView::read(Reader& reader, bool window_is_zoom) {
    const SeriesSelection& sel = shared_.chart_series();
    RankSeriesRequest req{sel.kind, sel.op, sel.name_regex, 0, {}};
    if (smoothing_ == 0) {
        req.window.columns = plot_columns_ > 0 ? plot_columns_ : kColumnsBeforeFirstFrame;
        if (window_is_zoom) req.window.lo = lo_, req.window.hi = hi_;
        req.window.keep_step = cursor_;
    }
    reduced_ = req.window.columns > 0;
    read_columns_ = req.window.columns;
    series_ = reader.rank_series(req);
    data_lo_ = 0;
    data_hi_ = -1;
    for (const auto& s : series_) {
        if (s.points.empty()) continue;
        data_lo_ = data_hi_ < data_lo_ ? s.points.front().step : std::min(data_lo_, s.points.front().step);
        data_hi_ = std::max(data_hi_, s.points.back().step);
    }
}

Reaction ChartView::moved() const {
    return reduced_ ? Reaction::reload : Reaction::redraw;
}

Reaction ChartView::zoom(double factor) {
    if (hi_ < lo_) return Reaction::none;
    const double centre =
        cursor_ ? static_cast<double>(*cursor_) : (static_cast<double>(lo_) + static_cast<double>(hi_)) / 2;
    const double half = std::max(2.0, ((static_cast<double>(hi_) - static_cast<double>(lo_)) / 2) * factor);
    lo_ = std::max(data_lo_, step_from_double(std::floor(centre - half)));
    hi_ = std::min(data_hi_, step_from_double(std::ceil(centre + half)));
    zoomed_ = lo_ > data_lo_ || hi_ < data_hi_;
    return moved();
}

Reaction ChartView::pan(double fraction) {
    const std::int64_t span = sat_sub(hi_, lo_);
    if (span <= 0) return Reaction::none;
    std::int64_t shift = static_cast<std::int64_t>(std::llround(static_cast<double>(span) * fraction));
    if (shift == 0) shift = fraction > 0 ? 1 : -1;
    shift = std::clamp(shift, sat_sub(data_lo_, lo_), sat_sub(data_hi_, hi_));
    lo_ = sat_add(lo_, shift);
    hi_ = sat_add(hi_, shift);
    zoomed_ = true;
    return moved();
}

Reaction ChartView::jump_anomaly(int delta) {
    if (!shared_.drill) return Reaction::none;
    const auto& steps = shared_.drill->anomaly_steps;
    if (steps.empty()) return Reaction::none;
    const std::int64_t at = cursor_.value_or(delta > 0 ? sat_sub(lo_, 1) : sat_add(hi_, 1));
    std::optional<std::int64_t> target;
    if (delta > 0) {
        auto it = std::upper_bound(steps.begin(), steps.end(), at);
        if (it != steps.end()) target = *it;
    } else {
        auto it = std::lower_bound(steps.begin(), steps.end(), at);
        if (it != steps.begin()) target = *(it - 1);
    }
    if (!target) return Reaction::none;
    cursor_ = target;
    const std::int64_t half = std::max<std::int64_t>(5, sat_sub(hi_, lo_) / 2);
    lo_ = std::max(data_lo_, sat_sub(*target, half));
    hi_ = std::min(data_hi_, sat_add(*target, half));
    zoomed_ = true;
    return moved();
}

Reaction ChartView::next_rank(int delta) {
    if (series_.empty()) return Reaction::none;
    std::size_t i = 0;
    for (; i < series_.size(); ++i)
        if (series_[i].rank == shared_.chart_rank()) break;
    i = (i + series_.size() + static_cast<std::size_t>(delta < 0 ? series_.size() - 1 : 1)) % series_.size();
    shared_.chart_rank() = series_[i].rank;
    return Reaction::redraw;
}

void ChartView::draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) {
    const SeriesSelection& sel = shared_.chart_series();
    const int focus = shared_.chart_rank();
    std::vector<ChartSeries> lines;
    // The focused rank first, so the legend and the cursor read-out name it before any other (a narrow screen clips
    // the end); draw_chart paints the faint lines first whatever their order.
    const std::string label = "rank " + std::to_string(focus);
    bool focus_drawn = false;
    for (const auto& s : series_) {
        if (s.rank != focus) continue;
        focus_drawn = true;
        auto raw = to_points(s.points);
        if (smoothing_ > 0) {
            lines.push_back({label + " ema " + std::to_string(kSmoothing[smoothing_]).substr(0, 4),
                             smooth_debiased_ema(raw, kSmoothing[smoothing_]),
                             {Color::series0, Color::none, kBold},
                             false});
            lines.push_back({label + " raw", raw, {Color::series0, Color::none, kDim}, true});
        } else {
            lines.push_back({label, raw, {Color::series0, Color::none, kBold}, false});
        }
    }
    // A rank with none of this statistic is still named: the chart never quietly shows another rank instead.
    if (!focus_drawn && focus >= 0)
        lines.push_back({label + ": no values", {}, {Color::bad, Color::none, kBold}, false});
    static const Color palette[] = {Color::series1, Color::series2, Color::series3, Color::series4, Color::series5};
    int others = 0;
    for (const auto& s : series_) {
        if (s.rank == focus || !others_ || others >= 8) continue;
        lines.push_back(
            {"r" + std::to_string(s.rank), to_points(s.points), {palette[others % 5], Color::none, kDim}, true});
        ++others;
    }
    ChartOptions opt;
    opt.step_lo = lo_;
    opt.step_hi = hi_;
    opt.log_y = log_y_;
    opt.cursor_step = cursor_;
    // Log-y leaves out values <= 0: said in the title, and instead of an empty chart when nothing is left.
    std::size_t shown = 0, not_positive = 0;
    if (log_y_)
        for (const auto& l : lines)
            for (const auto& p : l.points)
                if (p.step >= lo_ && p.step <= hi_ && std::isfinite(p.value)) ++(p.value > 0 ? shown : not_positive);
    opt.title =
        sel.kind + " " + sel.op + (sel.name_regex ? " " + filter_title(*sel.name_regex) : std::string()) + "  steps " +
        std::to_string(lo_) + "-" + std::to_string(hi_) +
        (log_y_ ? not_positive ? "  log-y (" + std::to_string(not_positive) + " values <= 0 not drawn)" : "  log-y"
                : "") +
        (!others_ ? "  other ranks hidden" : "");
    if (series_.empty() || hi_ < lo_) {
        buf.text(x, y, "no data for " + sel.kind + " " + sel.op + " yet", {Color::dim, Color::none, kPlain}, width);
        return;
    }
    if (log_y_ && shown == 0 && not_positive > 0) {
        buf.text(x, y, opt.title, {Color::accent, Color::none, kBold}, width);
        buf.text(x, y + 2, "log-y: every value here is <= 0, nothing to draw on a log axis (L: linear)",
                 {Color::warn, Color::none, kBold}, width);
        return;
    }
    plot_columns_ = draw_chart(buf, x, y, width, height, lines, opt, glyphs);
}

}  // namespace msmon::tui
