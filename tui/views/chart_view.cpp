// Chart view: reads every rank's series for the shared selection; draws the focused rank bright, up to eight
// others faint, via draw_chart.
#include "tui/views/chart_view.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/series/op_aggregate.hpp"
#include "core/text/name_pattern.hpp"
#include "core/text/rank_ranges.hpp"
#include "tui/glyph_stand_ins.hpp"
#include "tui/models/baseline_ratio.hpp"
#include "tui/models/layer_grid.hpp"
#include "tui/models/rank_band.hpp"
#include "tui/tab_table.hpp"
#include "tui/views/view_deps.hpp"
#include "tui/widgets/step_math.hpp"
#include "tui/widgets/tensor_name.hpp"

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

// Legend labels for tensors drawn side by side: the part they share in front ("module.decoder.layers.") left out,
// each rest cut to `room` keeping what tells them apart.
std::vector<std::string> tensor_labels(const std::vector<std::string>& names, int room, bool unicode) {
    std::size_t shared = names.empty() ? 0 : names.front().size();
    for (const auto& n : names) {
        std::size_t i = 0;
        while (i < shared && i < n.size() && n[i] == names.front()[i]) ++i;
        shared = i;
    }
    if (names.size() < 2) shared = 0;
    while (shared > 0 && names.front()[shared - 1] != '.') --shared;  // whole parts only
    std::vector<std::string> out;
    for (const auto& n : names)
        out.push_back(shared > 0 ? glyph_text(kCutMark, unicode) + fit_tensor_name(n.substr(shared), room - 1, unicode)
                                 : fit_tensor_name(n, room, unicode));
    return out;
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
        {{'t'}, "t", "lines: one a rank, or one a tensor the filter matches, on the focused rank (6 a page)", [this] {
             tensors_ = !tensors_;
             tensor_page_ = 0;
             return Reaction::reload;
         }},
        {{kKeyPageDown}, "PgDn", "lines by tensor: the next 6 tensors", [this] { return page_tensors(1); }},
        {{kKeyPageUp}, "PgUp", "lines by tensor: the 6 before", [this] { return page_tensors(-1); }},
        {{'b'}, "b", "the other ranks as a band: min, median and max across every rank, the focused rank over it", [this] {
             band_ = !band_;
             return Reaction::redraw;
         }},
        {{'y'}, "y", "y range: every value, or robust (2% at each end may leave it, marked on the edge)", [this] {
             robust_y_ = !robust_y_;
             return Reaction::redraw;
         }},
        {{'w'}, "w", "x axis: steps, the wall clock, the time since the first step (long pauses clipped and marked)", [this] {
             x_axis_ = x_axis_ == XAxis::step ? XAxis::wall : x_axis_ == XAxis::wall ? XAxis::elapsed : XAxis::step;
             return Reaction::reload;
         }},
        {{'x'}, "x", "the focused rank divided by the baseline (--baseline, :baseline PATH), or the values again", [this] {
             ratio_ = !ratio_;
             return Reaction::reload;
         }},
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
    if (tensors_) read_tensors(reader, zoomed_);
    else read_abandoned(reader);
    read_baseline();
    time_axis_ = x_axis_ == XAxis::step ? TimeAxis{} : TimeAxis(reader.step_times());
    if (!zoomed_) {
        lo_ = data_lo_;
        hi_ = data_hi_;
        // While a backlog's history is read, its unread steps belong to the run too: drawn as unread.
        if (shared_.unread_steps && hi_ >= lo_) {
            lo_ = std::min(lo_, shared_.unread_steps->first);
            hi_ = std::max(hi_, shared_.unread_steps->second);
        }
    }
}

// Only what draws on the plot's pixel columns (the width of the last frame; a guess before the first), over the
// zoomed range or the whole extent; every step when smoothing, which needs them all.
void ChartView::read(Reader& reader, bool window_is_zoom) {
    const SeriesSelection& sel = shared_.chart_series();
    RankSeriesRequest req{sel.kind, sel.op, sel.name_regex, 0, window(window_is_zoom)};
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

void ChartView::read_baseline() {
    baseline_.clear();
    if (!shared_.baseline || tensors_) return;
    const SeriesSelection& sel = shared_.chart_series();
    RankSeriesRequest req{sel.kind, sel.op, sel.name_regex, 0, ratio_ ? SeriesWindow{} : window(zoomed_)};
    for (auto& s : shared_.baseline->rank_series(req))
        if (s.rank == shared_.chart_rank()) baseline_ = std::move(s.points);
}

void ChartView::read_abandoned(Reader& reader) {
    abandoned_.clear();
    const SeriesSelection& sel = shared_.chart_series();
    const int rank = shared_.chart_rank();
    if (rank < 0 || sel.kind.empty()) return;
    const AggregateRule rule = aggregate_rule(sel.op);
    for (const RunSegment& seg : reader.run_segments()) {
        if (seg.rank != rank || !seg.retrained_from) continue;
        std::string error;
        PointFilter f;
        f.rank = rank;
        f.kind = sel.kind;
        f.op = sel.op;
        f.name_regex = sel.name_regex;
        f.steps = StepList::parse(std::to_string(*seg.retrained_from) + "-" + std::to_string(seg.last_step), error);
        std::map<std::int64_t, StepAggregate> per_step;
        reader.points(f, [&](const Point& p) {
            if (p.run_id == seg.run_id && !p.is_text && p.op == sel.op) add_value(rule, per_step[p.step], p.value);
        });
        if (per_step.empty()) continue;
        Abandoned a{*seg.retrained_from, seg.last_step, {}};
        for (const auto& [step, agg] : per_step) a.points.push_back({step, final_value(rule, agg)});
        abandoned_.push_back(std::move(a));
    }
}

SeriesWindow ChartView::window(bool window_is_zoom) const {
    SeriesWindow w;
    if (smoothing_ == 0 && !ratio_) {  // smoothing and the ratio need every step
        w.columns = plot_columns_ > 0 ? plot_columns_ : kColumnsBeforeFirstFrame;
        if (window_is_zoom) w.lo = lo_, w.hi = hi_;
        w.keep_step = cursor_;
    }
    return w;
}

void ChartView::read_tensors(Reader& reader, bool window_is_zoom) {
    tensor_series_.clear();
    tensors_matched_ = 0;
    const SeriesSelection& sel = shared_.chart_series();
    const int rank = shared_.chart_rank();
    if (rank < 0 || sel.kind.empty()) return;
    std::optional<NamePattern> pattern;
    std::string why;
    if (sel.name_regex) pattern = NamePattern::compile(*sel.name_regex, why);
    // The rank's tensors in forward order, each with its micro-steps' rows.
    std::vector<std::pair<std::string, std::vector<ModuleRow>>> tensors;
    for (auto& row : reader.module_rows(sel.kind, rank)) {
        if (pattern && !pattern->search(row.name)) continue;
        auto it = std::find_if(tensors.begin(), tensors.end(), [&](const auto& t) { return t.first == row.name; });
        if (it == tensors.end()) it = tensors.insert(tensors.end(), {row.name, {}});
        it->second.push_back(std::move(row));
    }
    tensors_matched_ = tensors.size();
    const std::size_t pages = std::max<std::size_t>(1, (tensors.size() + kTensorsPerPage - 1) / kTensorsPerPage);
    tensor_page_ = std::min(tensor_page_, pages - 1);
    const std::size_t first = tensor_page_ * kTensorsPerPage;
    const std::size_t end = std::min(tensors.size(), first + kTensorsPerPage);
    ModuleSeriesRequest req{sel.kind, sel.op, rank, {}, window(window_is_zoom)};
    for (std::size_t i = first; i < end; ++i)
        req.rows.insert(req.rows.end(), tensors[i].second.begin(), tensors[i].second.end());
    if (req.rows.empty()) return;
    const auto series = reader.module_series(req);
    std::size_t at = 0;
    for (std::size_t i = first; i < end; ++i) {
        std::vector<const std::vector<StepValue>*> parts;
        for (std::size_t k = 0; k < tensors[i].second.size(); ++k) parts.push_back(&series[at++]);
        tensor_series_.push_back({tensors[i].first, fold_micro_steps(parts, sel.op)});
    }
}

Reaction ChartView::page_tensors(int delta) {
    if (!tensors_) return Reaction::none;
    const std::size_t pages = std::max<std::size_t>(1, (tensors_matched_ + kTensorsPerPage - 1) / kTensorsPerPage);
    const long next = static_cast<long>(tensor_page_) + delta;
    if (next < 0 || next >= static_cast<long>(pages)) return Reaction::none;
    tensor_page_ = static_cast<std::size_t>(next);
    return Reaction::reload;
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
    return Reaction::reload;  // the rank's own tensors, abandoned stretch and baseline
}

void ChartView::draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) {
    const SeriesSelection& sel = shared_.chart_series();
    const int focus = shared_.chart_rank();
    std::vector<ChartSeries> lines;
    static const Color palette[] = {Color::series1, Color::series2, Color::series3, Color::series4, Color::series5};
    const auto add_line = [&](const std::string& label, std::vector<SeriesPoint> raw, Color colour, bool bold) {
        if (smoothing_ > 0) {
            lines.push_back({label + " ema " + std::to_string(kSmoothing[smoothing_]).substr(0, 4),
                             smooth_debiased_ema(raw, kSmoothing[smoothing_]),
                             {colour, Color::none, static_cast<std::uint8_t>(bold ? kBold : kPlain)},
                             false});
            lines.push_back({label + " raw", std::move(raw), {colour, Color::none, kDim}, true});
        } else {
            lines.push_back({label,
                             std::move(raw),
                             {colour, Color::none, static_cast<std::uint8_t>(bold ? kBold : kPlain)},
                             false});
        }
    };
    std::string what;  // what the lines are, for the title
    if (tensors_) {
        // One line a tensor, named in the legend in the room each has.
        const int room = std::max(12, width / static_cast<int>(std::max<std::size_t>(1, tensor_series_.size())) - 2);
        std::vector<std::string> names;
        for (const auto& t : tensor_series_) names.push_back(t.first);
        const auto labels = tensor_labels(names, room, glyphs.unicode);
        for (std::size_t i = 0; i < tensor_series_.size(); ++i)
            add_line(labels[i], to_points(tensor_series_[i].second), i == 0 ? Color::series0 : palette[(i - 1) % 5],
                     i == 0);
        const std::size_t first = tensor_page_ * kTensorsPerPage;
        what = "  rank " + std::to_string(focus) + ": ";
        if (tensors_matched_ == 0) what += "no tensor matches";
        else
            what += "tensors " + std::to_string(first + 1) + "-" + std::to_string(first + tensor_series_.size()) +
                    " of " + std::to_string(tensors_matched_) +
                    (first + tensor_series_.size() < tensors_matched_ ? " (PgDn: more)" : "");
    } else {
        // The focused rank first, so the legend and the cursor read-out name it before any other (a narrow screen
        // clips the end); draw_chart paints the faint lines first whatever their order.
        const std::string label = "rank " + std::to_string(focus);
        bool focus_drawn = false;
        for (const auto& s : series_) {
            if (s.rank != focus) continue;
            focus_drawn = true;
            if (ratio_ && shared_.baseline) {
                const BaselineRatio r = ratio_to_baseline(s.points, baseline_);
                add_line(label + " / baseline", to_points(r.points), Color::series0, true);
                if (!r.points.empty())
                    lines.push_back({"x1",
                                     {{r.points.front().step, 1.0}, {r.points.back().step, 1.0}},
                                     {Color::dim, Color::none, kDim},
                                     true});
                what += "  " + r.summary;
            } else {
                add_line(label, to_points(s.points), Color::series0, true);
                add_replicas(lines, what);
                if (!baseline_.empty())
                    lines.push_back({"baseline", to_points(baseline_), {Color::dim, Color::none, kDim}, true});
            }
        }
        if (ratio_ && !shared_.baseline) what += "  x: no baseline (--baseline DIR, or :baseline PATH)";
        else if (shared_.baseline && !ratio_) what += "  baseline " + shared_.baseline_name;
        // A rank with none of this statistic is still named: the chart never quietly shows another rank instead.
        if (!focus_drawn && focus >= 0)
            lines.push_back({label + ": no values", {}, {Color::bad, Color::none, kBold}, false});
        // What a restart trained again: the earlier run's stretch, faint, named in the read-out where it has values.
        for (const Abandoned& a : abandoned_) {
            lines.push_back(
                {label + " abandoned", to_points(a.points), {Color::series0, Color::none, kDim}, true, true});
            what += "  restart: " + std::to_string(a.from) + "-" + std::to_string(a.to) + " trained again";
        }
        if (ratio_ && shared_.baseline) {
            // Ratios only: another rank's values would share no scale with them.
        } else if (band_) {  // every rank's spread, instead of eight of them
            const RankBand band =
                rank_band(series_, StepColumns(lo_, hi_, plot_columns_ > 0 ? plot_columns_ : kColumnsBeforeFirstFrame));
            lines.push_back({"max of " + std::to_string(band.ranks) + " ranks",
                             band.max,
                             {Color::series1, Color::none, kDim},
                             true});
            lines.push_back({"median", band.median, {Color::series2, Color::none, kDim}, true});
            lines.push_back({"min", band.min, {Color::series1, Color::none, kDim}, true});
        } else {
            int others = 0;
            for (const auto& s : series_) {
                if (s.rank == focus || !others_ || others >= 8) continue;
                lines.push_back({"r" + std::to_string(s.rank),
                                 to_points(s.points),
                                 {palette[others % 5], Color::none, kDim},
                                 true});
                ++others;
            }
        }
    }
    ChartOptions opt;
    opt.step_lo = lo_;
    opt.step_hi = hi_;
    opt.log_y = log_y_;
    opt.cursor_step = cursor_;
    opt.unread = shared_.unread_steps;
    if (robust_y_) opt.clip_fraction = 0.02;
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
        (!others_ && !band_ && !tensors_ ? "  other ranks hidden" : "") + what + (robust_y_ ? "  robust y" : "");
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
    if (x_axis_ != XAxis::step) place_in_time(lines, opt, glyphs.unicode);
    plot_columns_ = draw_chart(buf, x, y, width, height, lines, opt, glyphs);
}

void ChartView::add_replicas(std::vector<ChartSeries>& lines, std::string& what) const {
    if (!shared_.drill || shared_.drill->replicas.empty()) return;
    // Replicas agree: the first one's values are the group's.
    const std::vector<int>& replicas = shared_.drill->replicas;
    const auto first =
        std::find_if(series_.begin(), series_.end(), [&](const auto& s) { return s.rank == replicas.front(); });
    if (first == series_.end()) return;
    const std::string name = "replica" + std::string(replicas.size() == 1 ? " " : "s ") + rank_ranges(replicas);
    lines.push_back({name, to_points(first->points), {Color::series1, Color::none, kBold}, false});
    what += "  against its " + name;
}

void ChartView::place_in_time(std::vector<ChartSeries>& lines, ChartOptions& opt, bool unicode) const {
    const char* name = x_axis_ == XAxis::wall ? "  wall clock" : "  time since the first step";
    if (time_axis_.empty()) {
        opt.title += std::string(name) + ": no step times in this store (steps instead)";
        return;
    }
    for (auto& l : lines) {
        std::vector<SeriesPoint> placed;
        placed.reserve(l.points.size());
        for (const auto& p : l.points)
            if (const auto at = time_axis_.x_of(p.step)) placed.push_back({*at, p.value});
        l.points = std::move(placed);
    }
    opt.unread.reset();  // unread steps have no times yet
    opt.step_lo = time_axis_.x_of(lo_).value_or(0);
    opt.step_hi = std::max(opt.step_lo, time_axis_.x_of(hi_).value_or(opt.step_lo));
    const XAxis mode = x_axis_;
    const TimeAxis& axis = time_axis_;
    opt.x_label = [&axis, mode](std::int64_t at) { return axis.label(at, mode); };
    if (cursor_) {
        if (const auto at = time_axis_.x_of(*cursor_)) {
            opt.cursor_step = *at;
            opt.cursor_label = "step " + std::to_string(*cursor_) + " " + time_axis_.label(*at, mode);
        }
    }
    opt.title += name;
    std::size_t shown = 0;
    std::string first;
    for (const ClippedPause& p : time_axis_.pauses()) {
        if (p.before_step < lo_ || p.after_step > hi_) continue;
        opt.x_marks.push_back(p.x);
        if (shown++ == 0) first = duration_text(p.ms) + " after step " + std::to_string(p.after_step);
    }
    const std::string mark = glyph_text(U'≈', unicode);
    if (shown == 1) opt.title += ", a pause clipped (" + mark + "): " + first;
    else if (shown > 1)
        opt.title += ", " + std::to_string(shown) + " pauses clipped (" + mark + "), the first " + first;
}

std::unique_ptr<View> make_chart_view(ViewDeps& deps) {
    return std::make_unique<ChartView>(deps.shared);
}

}  // namespace msmon::tui
