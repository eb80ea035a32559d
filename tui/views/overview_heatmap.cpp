// The Overview's heatmap: every rank a row (ranks sharing a screen row when they outnumber the rows), steps across.
// The selected rank's row is marked and labelled, a colour scale with the values it spans heads the map, and a
// step axis under it says which steps are shown; h/l pan back through the run, 0 shows the whole run at once.
#include <algorithm>

#include "tui/views/overview_points.hpp"
#include "tui/views/overview_view.hpp"
#include "tui/widgets/heatmap.hpp"
#include "tui/widgets/step_axis.hpp"
#include "tui/widgets/step_math.hpp"

namespace msmon::tui {

namespace {

constexpr int kLabelWidth = 7;

}  // namespace

OverviewView::HeatWindow OverviewView::heat_window() const {
    std::int64_t first = model_.catalog.min_step, last = model_.catalog.max_step;
    if (last < first) first = model_.step_lo, last = model_.step_hi;
    if (last < first) return {};
    const int width = std::max(1, heat_width_);
    if (heat_span_ == HeatSpan::whole)
        return {first, last, static_cast<int>(std::min<std::int64_t>(width, sat_add(sat_sub(last, first), 1)))};
    const std::int64_t hi = heat_span_ == HeatSpan::panned ? std::clamp(heat_end_, first, last) : model_.step_hi;
    const std::int64_t lo = std::max(first, sat_add(sat_sub(hi, width), 1));
    return {lo, hi, static_cast<int>(hi - lo + 1)};
}

Reaction OverviewView::pan_heatmap(int direction) {
    if (!heatmap_shown_ || heat_span_ == HeatSpan::whole) return Reaction::none;
    const HeatWindow now = heat_window();
    if (now.hi < now.lo) return Reaction::none;
    const std::int64_t shift = std::max(1, heat_width_ / 4);
    const std::int64_t last = std::max(model_.catalog.max_step, model_.step_hi);
    const std::int64_t end = direction < 0 ? sat_sub(now.hi, shift) : sat_add(now.hi, shift);
    if (end >= last) {
        heat_span_ = HeatSpan::latest;  // back at the newest step: follow the run again
    } else {
        heat_span_ = HeatSpan::panned;
        heat_end_ = end;
    }
    return Reaction::reload;
}

Reaction OverviewView::toggle_whole_run() {
    if (!heatmap_shown_) return Reaction::none;
    heat_span_ = heat_span_ == HeatSpan::whole ? HeatSpan::latest : HeatSpan::whole;
    return Reaction::reload;
}

void OverviewView::collect_heatmap(Reader& reader) {
    heat_series_.clear();
    if (heat_span_ == HeatSpan::latest || model_.selection.kind.empty()) return;  // the list's window has it
    const HeatWindow win = heat_window();
    if (win.hi < win.lo) return;
    RankSeriesRequest req{model_.selection.kind, model_.selection.op, model_.selection.name_regex, 0, {}};
    req.window = SeriesWindow{win.lo, win.hi, win.columns, std::nullopt};
    heat_series_ = reader.rank_series(req);
}

void OverviewView::draw_heatmap_view(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs,
                                     const std::vector<std::size_t>& order) {
    const Style dim{Color::dim, Color::none, kPlain};
    const int map_x = x + kLabelWidth, map_w = std::max(1, width - kLabelWidth);
    const int map_h = std::max(1, height - 3);  // under the title: the scale's row above, the step axis below
    heat_width_ = map_w;
    const HeatWindow win = heat_window();
    std::vector<std::vector<ColumnStat>>& rows = heat_rows_;  // reused: a frame allocates nothing
    rows.resize(order.size());
    for (std::size_t k = 0; k < order.size(); ++k) {
        const OverviewRow& row = model_.rows[order[k]];
        const std::vector<StepValue>* points = &row.points;
        if (heat_span_ != HeatSpan::latest) {
            static const std::vector<StepValue> kNone;
            points = &kNone;
            for (const auto& s : heat_series_)
                if (s.rank == row.rank) points = &s.points;
        }
        downsample_minmax_into(tail_points(*points, win.lo, scratch_), win.lo, win.hi, std::max(1, win.columns),
                               rows[k]);
    }
    const auto range = draw_heatmap(buf, map_x, y + 2, map_w, map_h, rows, glyphs, HeatmapOptions{log_scale_, {}, {}});

    // Above the map: which ranks, how many per row, and the colour scale with the values at its ends.
    const std::size_t screen_rows = std::min(rows.size(), static_cast<std::size_t>(map_h));
    const std::size_t per_row = screen_rows ? (rows.size() + screen_rows - 1) / screen_rows : 1;
    std::string head = "ranks " + std::to_string(model_.rows.front().rank) + ".." +
                       std::to_string(model_.rows.back().rank) + " (" + std::to_string(rows.size()) +
                       (per_row > 1 ? ", up to " + std::to_string(per_row) + " a row" : "") + ")" +
                       (heat_span_ == HeatSpan::whole    ? "  whole run"
                        : heat_span_ == HeatSpan::panned ? "  panned"
                                                         : "");
    int cx = x + buf.text(x, y + 1, head, dim, width);
    if (range && cx + 30 < x + width) {
        cx += buf.text(cx, y + 1, "   colour " + short_number(range->lo) + (log_scale_ ? " (log) " : " "), dim,
                       x + width - cx);
        cx += draw_heatmap_scale(buf, cx, y + 1, glyphs);
        buf.text(cx, y + 1, " " + short_number(range->hi), dim, x + width - cx);
    }

    // Labels: the selected rank on its row, marked; some rows' first rank between.
    const std::size_t selected = selected_position(order);
    std::size_t selected_row = 0;
    for (std::size_t r = 0; r < screen_rows; ++r)
        if (heatmap_first_row(r, rows.size(), map_h) <= selected) selected_row = r;
    const std::size_t every = std::max<std::size_t>(2, static_cast<std::size_t>(map_h) / 8);
    for (std::size_t r = 0; r < screen_rows; r += every)
        if (r + 1 < selected_row || r > selected_row + 1)
            buf.text(x, y + 2 + static_cast<int>(r),
                     " r" + std::to_string(model_.rows[order[heatmap_first_row(r, rows.size(), map_h)]].rank), dim,
                     kLabelWidth - 1);
    if (!order.empty())
        buf.text(x, y + 2 + static_cast<int>(selected_row), ">r" + std::to_string(model_.rows[order[selected]].rank),
                 {Color::accent, Color::none, static_cast<std::uint8_t>(kReverse | kBold)}, kLabelWidth - 1);

    // The step axis: the first, middle and last step shown, under their columns.
    if (win.hi < win.lo || win.columns <= 0) return;
    const int axis_y = y + 2 + static_cast<int>(screen_rows);
    draw_step_axis(buf, map_x + map_w - std::min(map_w, win.columns), axis_y,
                   StepColumns(win.lo, win.hi, std::min(map_w, win.columns)), dim);
}

}  // namespace msmon::tui
