// Layers view: rows from Reader::module_rows, only the visible rows' series read (Reader::module_series), each
// cell a step; relative mode colours log10(value / the row's median of its previous 8 steps).
#include "tui/views/layers_view.hpp"

#include <algorithm>
#include <cmath>

#include "core/text/name_pattern.hpp"
#include "tui/models/layer_rows.hpp"
#include "tui/widgets/heatmap.hpp"
#include "tui/widgets/step_axis.hpp"
#include "tui/widgets/step_math.hpp"
#include "tui/widgets/tensor_name.hpp"

namespace msmon::tui {

namespace {

constexpr std::size_t kHistory = 8;              // steps before a cell its row's reference is the median of
constexpr double kLevelLo = -1, kLevelHi = 1.5;  // relative colours: 0.1x .. 31.6x the reference

}  // namespace

LayersView::LayersView(SharedSelection& shared, IncidentIndex& incidents, std::function<void()> open_chart)
    : shared_(shared), incidents_(incidents), open_chart_(std::move(open_chart)) {
    // One binding per line reads as a table.
    // clang-format off
    keys_ = {
        {{kKeyDown, 'j'}, "j/Down", "next tensor", [this] { return move(1); }},
        {{kKeyUp, 'k'}, "k/Up", "previous tensor", [this] { return move(-1); }},
        {{kKeyPageDown}, "PgDn", "next page of tensors", [this] { return move(rows_visible_); }},
        {{kKeyPageUp}, "PgUp", "previous page of tensors", [this] { return move(-rows_visible_); }},
        {{kKeyHome, 'g'}, "g/Home", "first tensor", [this] { return move(-1000000000); }},
        {{kKeyEnd, 'G'}, "G/End", "last tensor", [this] { return move(1000000000); }},
        {{kKeyEnter}, "Enter", "chart of the selected tensor on this rank", [this] { return chart(); }},
        {{']'}, "]", "next kind (actv, grad_reduced, ...)", [this] { return cycle_kind(1); }},
        {{'['}, "[", "previous kind", [this] { return cycle_kind(-1); }},
        {{'o'}, "o", "next op (norm, max, min, mean, ...)", [this] { return cycle_op(); }},
        {{'r'}, "r", "next rank", [this] { return next_rank(1); }},
        {{'R'}, "R", "previous rank", [this] { return next_rank(-1); }},
        {{'a'}, "a", "colour: against the row's own last 8 steps, or by value (log scale)", [this] {
             relative_ = !relative_;
             return Reaction::redraw;
         }},
    };
    // clang-format on
}

void LayersView::collect(Reader& reader) {
    catalog_ = reader.catalog();
    const auto has_kind = [&](const std::string& k) {
        return std::any_of(catalog_.kinds.begin(), catalog_.kinds.end(), [&](const auto& e) { return e.first == k; });
    };
    if (kind_.empty() || !has_kind(kind_)) {
        kind_.clear();
        for (const char* k : {"actv", "grad_reduced", "grad_unreduced", "param_origin"})
            if (kind_.empty() && has_kind(k)) kind_ = k;
        if (kind_.empty() && !catalog_.kinds.empty()) kind_ = catalog_.kinds.front().first;
    }
    for (const auto& [k, ops] : catalog_.kinds)
        if (k == kind_ && std::find(ops.begin(), ops.end(), op_) == ops.end())
            op_ = std::find(ops.begin(), ops.end(), "norm") != ops.end() ? "norm" : ops.empty() ? "" : ops.front();
    const auto known = [&](int r) {
        return std::find(catalog_.ranks.begin(), catalog_.ranks.end(), r) != catalog_.ranks.end();
    };
    incidents_.update(reader);
    // Until a rank is chosen (r/R): where the top incident began, followed as ranks' files arrive (a NaN seen first
    // where it spread to moves to its origin once the origin's rank is read); with none, the Overview's rank.
    const bool top_incident = incidents_.grouped() && !incidents_.incidents().empty();
    if (!rank_chosen_ || !known(rank_)) {
        if (top_incident && known(incidents_.anomalies()[incidents_.incidents().front().origin].rank))
            rank_ = incidents_.anomalies()[incidents_.incidents().front().origin].rank;
        else if (known(shared_.focus_rank)) rank_ = shared_.focus_rank;
        else if (!known(rank_)) rank_ = catalog_.ranks.empty() ? -1 : catalog_.ranks.front();
    }
    rows_ = kind_.empty() || rank_ < 0 ? std::vector<ModuleRow>{} : reader.module_rows(kind_, rank_);
    selected_ = rows_.empty() ? 0 : std::min(selected_, rows_.size() - 1);
    if (selected_ < top_) top_ = selected_;
    if (selected_ >= top_ + static_cast<std::size_t>(rows_visible_))
        top_ = selected_ - static_cast<std::size_t>(rows_visible_) + 1;
    hi_ = catalog_.max_step;
    lo_ = std::max(catalog_.min_step, sat_add(sat_sub(hi_, std::max(1, map_width_)), 1));
    ModuleSeriesRequest req{kind_, op_, rank_, {}, {}};
    for (std::size_t i = top_; i < rows_.size() && i < top_ + static_cast<std::size_t>(rows_visible_); ++i)
        req.rows.push_back(rows_[i]);
    req.window = SeriesWindow{sat_sub(lo_, static_cast<std::int64_t>(kHistory)), hi_, 0, std::nullopt};
    series_ = req.rows.empty() || hi_ < lo_ ? std::vector<std::vector<StepValue>>{} : reader.module_series(req);
    read_rows_ = rows_visible_, read_width_ = map_width_, read_top_ = top_;
    stale_ = false;
}

Reaction LayersView::move(int delta) {
    if (rows_.empty()) return Reaction::none;
    const long next = std::clamp<long>(static_cast<long>(selected_) + delta, 0, static_cast<long>(rows_.size()) - 1);
    selected_ = static_cast<std::size_t>(next);
    if (selected_ < top_ || selected_ >= top_ + static_cast<std::size_t>(rows_visible_)) {
        top_ = selected_ < top_ ? selected_ : selected_ - static_cast<std::size_t>(rows_visible_) + 1;
        return Reaction::reload;  // other rows: their series
    }
    return Reaction::redraw;
}

Reaction LayersView::cycle_kind(int delta) {
    const auto& kinds = catalog_.kinds;
    if (kinds.empty()) return Reaction::none;
    std::size_t i = 0;
    while (i < kinds.size() && kinds[i].first != kind_) ++i;
    const auto n = static_cast<long>(kinds.size());
    kind_ = kinds[static_cast<std::size_t>(((static_cast<long>(i) + delta) % n + n) % n)].first;
    selected_ = top_ = 0;
    return Reaction::reload;
}

Reaction LayersView::cycle_op() {
    for (const auto& [k, ops] : catalog_.kinds) {
        if (k != kind_ || ops.empty()) continue;
        auto it = std::find(ops.begin(), ops.end(), op_);
        op_ = (it == ops.end() || it + 1 == ops.end()) ? ops.front() : *(it + 1);
        return Reaction::reload;
    }
    return Reaction::none;
}

Reaction LayersView::next_rank(int delta) {
    const auto& ranks = catalog_.ranks;
    if (ranks.empty()) return Reaction::none;
    auto it = std::find(ranks.begin(), ranks.end(), rank_);
    const auto n = static_cast<long>(ranks.size());
    const long i = it == ranks.end() ? 0 : ((it - ranks.begin()) + delta % n + n) % n;
    rank_ = ranks[static_cast<std::size_t>(i)];
    rank_chosen_ = true;
    return Reaction::reload;
}

Reaction LayersView::chart() {
    if (rows_.empty()) return Reaction::none;
    ChartDrill drill;
    drill.series = {kind_, op_, exact_name_pattern(rows_[selected_].name)};
    drill.rank = rank_;
    shared_.drill = std::move(drill);
    ++shared_.drills;
    open_chart_();
    return Reaction::reload;
}

void LayersView::draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) {
    const Style head{Color::accent, Color::none, kBold};
    const Style dim{Color::dim, Color::none, kPlain};
    std::string title = "rank " + std::to_string(rank_) + "  kind " + (kind_.empty() ? "-" : kind_) + "  op " + op_ +
                        "  " + std::to_string(rows_.size()) + " tensors";
    if (hi_ >= lo_) title += "  steps " + std::to_string(lo_) + "-" + std::to_string(hi_);
    buf.text(x, y, title, head, width);
    const int label_w = std::clamp(width / 3, 12, 60);
    const int map_x = x + label_w + 1, map_w = std::max(1, width - label_w - 1);
    rows_visible_ = std::max(1, height - 3);  // the title and the scale above, the step axis below
    map_width_ = map_w;
    stale_ = read_rows_ != rows_visible_ || read_width_ != map_width_ || read_top_ != top_;
    if (rows_.empty()) {
        buf.text(x, y + 2,
                 kind_.empty() ? "no data yet" : "no tensors of " + kind_ + " on rank " + std::to_string(rank_), dim,
                 width);
        return;
    }
    // The scale: what the colours stand for.
    int cx = x + buf.text(x, y + 1, relative_ ? "vs its last 8 steps: 0.1x " : "value (log): low ", dim, width);
    cx += draw_heatmap_scale(buf, cx, y + 1, glyphs);
    buf.text(cx, y + 1, relative_ ? " 30x   a: by value" : " high   a: vs its own history", dim, x + width - cx);

    const int columns = hi_ >= lo_ ? static_cast<int>(std::min<std::int64_t>(map_w, hi_ - lo_ + 1)) : 0;
    std::vector<std::vector<ColumnStat>> cells;
    std::vector<SeriesPoint> points;
    for (std::size_t r = 0; r < series_.size() && columns > 0; ++r) {
        points.clear();
        for (const auto& p : series_[r]) {
            if (p.step < lo_ || p.step > hi_) continue;
            points.push_back(
                {p.step, relative_ ? relative_level(p.value, recent_median(series_[r], p.step, kHistory)) : p.value});
        }
        cells.push_back(downsample_minmax(points, lo_, hi_, columns));
    }
    HeatmapOptions options;
    options.log_scale = !relative_;
    if (relative_) options.lo = kLevelLo, options.hi = kLevelHi;
    const int shown = std::min<int>(rows_visible_, static_cast<int>(cells.size()));
    cells.resize(static_cast<std::size_t>(std::max(0, shown)));  // read for a taller screen: one row a tensor still
    if (shown > 0) draw_heatmap(buf, map_x, y + 2, map_w, shown, cells, glyphs, options);
    for (int r = 0; r < rows_visible_ && top_ + static_cast<std::size_t>(r) < rows_.size(); ++r) {
        const std::size_t i = top_ + static_cast<std::size_t>(r);
        const ModuleRow& row = rows_[i];
        std::string label = row.name + (row.micro_step ? ":" + std::to_string(*row.micro_step) : "");
        const bool sel = i == selected_;
        buf.text(x, y + 2 + r, fit_tensor_name(label, label_w, glyphs.unicode),
                 {sel ? Color::accent : Color::none, Color::none, static_cast<std::uint8_t>(sel ? kReverse : kPlain)},
                 label_w);
    }
    if (columns > 0)
        draw_step_axis(buf, map_x + map_w - columns, y + 2 + std::min(rows_visible_, static_cast<int>(rows_.size())),
                       StepColumns(lo_, hi_, columns), dim);
}

}  // namespace msmon::tui
