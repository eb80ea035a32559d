// Layers view: the frame. Title, colour scale and legend, the rows (labels, cells, marks, the cursor), the axis
// across (steps, or ranks when one step is fixed) and the cursor's read-out.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/text/counted.hpp"
#include "tui/glyph_stand_ins.hpp"
#include "tui/views/layers_view.hpp"
#include "tui/views/overview_points.hpp"
#include "tui/widgets/heatmap.hpp"
#include "tui/widgets/step_axis.hpp"
#include "tui/widgets/tensor_name.hpp"

namespace msmon::tui {

namespace {

constexpr double kLevelLo = -1, kLevelHi = 1.5;  // relative colours: 0.1x .. 31.6x the reference

// A row's cells widened to `width` screen columns each (a gap after each when there is room for one).
std::vector<ColumnStat> widen(const std::vector<ColumnStat>& cells, int width) {
    if (width <= 1) return cells;
    std::vector<ColumnStat> out;
    for (const auto& c : cells) {
        for (int i = 0; i < (width >= 3 ? width - 1 : width); ++i) out.push_back(c);
        if (width >= 3) out.emplace_back();
    }
    return out;
}

}  // namespace

std::string LayersView::title_line() const {
    const std::string what = "kind " + (frame_.kind.empty() ? "-" : frame_.kind) + "  op " + frame_.op;
    std::size_t tensors = 0;
    for (const auto& row : frame_.grid) tensors += row.tensors.size();
    const std::string listed =
        std::to_string(tensors) + (tensors == 1 ? " tensor" : " tensors") +
        (tensors == frame_.grid.size() ? "" : " in " + std::to_string(frame_.grid.size()) + " rows");
    std::string t;
    switch (frame_.fixed) {
        case Fixed::rank:
            t = "rank " + std::to_string(frame_.rank) + "  " + what + "  " + listed;
            if (frame_.hi >= frame_.lo) t += "  steps " + std::to_string(frame_.lo) + "-" + std::to_string(frame_.hi);
            break;
        case Fixed::step:
            t = "step " + std::to_string(frame_.lo) + "  " + what + "  " + listed + " on " +
                counted(catalog_.ranks.size(), "rank");
            break;
        case Fixed::tensor:
            t = frame_.tensor + "  " + what + "  " + counted(frame_.row_ranks.size(), "rank");
            if (frame_.hi >= frame_.lo) t += "  steps " + std::to_string(frame_.lo) + "-" + std::to_string(frame_.hi);
            break;
    }
    if (frame_.fixed != Fixed::rank && !frame_.stages.empty()) t += "  " + frame_.stages;
    if (filter_ && !filter_->text().empty()) t += "  /" + filter_->text();
    if (micro_steps_apart_) t += "  micro-steps apart";
    return t;
}

std::string LayersView::cursor_line(int width, bool unicode) const {
    const auto t = cursor_target();
    if (!t) return {};
    const std::size_t row = selected_ - frame_.top, column = cursor_column();
    std::string s = "step " + std::to_string(t->step) + ", rank " + std::to_string(t->rank) + ", ";
    const std::size_t name_at = s.size();
    s += ":";
    const ColumnStat& v = frame_.values[row][column];
    const ColumnStat& l = frame_.levels[row][column];
    if (v.has_nan) s += " nan";
    else if (v.has_pos_inf) s += " inf";
    else if (v.has_neg_inf) s += " -inf";
    else if (v.count == 0) s += " no value";
    else {
        s += " " + short_number(v.max);
        if (l.count > 0 && (l.max != 0 || frame_.by_baseline)) {
            char ratio[32];
            std::snprintf(ratio, sizeof ratio, "%.3g", std::pow(10.0, l.max));
            s += std::string(" = ") + ratio + (frame_.by_baseline ? "x the baseline" : "x its last 8 steps");
        }
    }
    if (frame_.marks[row][column] == 2) s += "  (the top incident began here)";
    else if (frame_.marks[row][column] == 1) s += "  (in an incident)";
    // The tensor's name gives way (keeping its layer and module) so that the value and its mark show whole.
    const int room = std::max(12, width - display_width(s));
    return s.insert(name_at, fit_tensor_name(t->name, room, unicode));
}

void LayersView::draw_column_axis(ScreenBuffer& buf, int x, int y, int width, const Style& style) const {
    if (frame_.fixed != Fixed::step) {
        const int columns = static_cast<int>(std::min<std::int64_t>(width, frame_.hi - frame_.lo + 1));
        if (columns > 0) draw_step_axis(buf, x + width - columns, y, StepColumns(frame_.lo, frame_.hi, columns), style);
        return;
    }
    int free_from = x;  // a label only where the one before has ended
    for (std::size_t c = 0; c < frame_.column_ranks.size(); ++c) {
        const int cx = x + static_cast<int>(c) * cell_width_;
        const std::string label = (cell_width_ >= 3 ? "r" : "") + std::to_string(frame_.column_ranks[c]);
        if (cx < free_from || cx + static_cast<int>(label.size()) > x + width) continue;
        free_from = cx + buf.text(cx, y, label, style) + 1;
    }
}

void LayersView::draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) {
    const Style head{Color::accent, Color::none, kBold};
    const Style dim{Color::dim, Color::none, kPlain};
    buf.text(x, y, title_line(), head, width);
    const int label_w = std::clamp(width / 3, 12, 60);
    const int map_x = x + label_w + 1, map_w = std::max(1, width - label_w - 1);
    rows_visible_ = std::max(1, height - 4);  // title and scale above; the axis and the cursor's read-out below
    map_width_ = map_w;
    stale_ = frame_.rows_visible != rows_visible_ || frame_.width != map_width_ || frame_.top != top_;
    if (row_count() == 0) {
        std::string why = frame_.kind.empty() ? "no data yet"
                          : frame_.fixed == Fixed::tensor
                              ? "no values of " + frame_.tensor + " on rank " + std::to_string(frame_.rank)
                              : "no tensors of " + frame_.kind + " on rank " + std::to_string(frame_.rank);
        if (filter_ && !filter_->text().empty() && !frame_.rows.empty()) why = "no tensor matches /" + filter_->text();
        buf.text(x, y + 2, why, dim, width);
        return;
    }
    // The scale, and what the marks stand for.
    int cx = x + buf.text(x, y + 1,
                          !relative_           ? "value (log): low "
                          : frame_.by_baseline ? "vs the baseline: 0.1x "
                                               : "vs its last 8 steps: 0.1x ",
                          dim, width);
    cx += draw_heatmap_scale(buf, cx, y + 1, glyphs);
    cx += buf.text(cx, y + 1, relative_ ? " 30x " : " high ", dim, x + width - cx);
    // The legend in its long words where they fit, else in short ones (80 columns), else cut with the mark.
    const std::string top = glyph_text(U'◆', glyphs.unicode), in = glyph_text(U'•', glyphs.unicode);
    std::string legend = " ! nan  ^ inf  " + top + " top incident began  " + in + " in an incident";
    if (display_width(legend) > x + width - cx) legend = " ! nan  ^ inf  " + top + " origin  " + in + " in incident";
    buf.text(cx, y + 1, legend, dim, x + width - cx);

    const auto& cells = relative_ ? frame_.levels : frame_.values;
    std::vector<std::vector<ColumnStat>> shown;
    for (const auto& row : cells) shown.push_back(widen(row, cell_width_));
    const int rows = std::min<int>(rows_visible_, static_cast<int>(shown.size()));
    const int cells_w = shown.empty() ? 0 : std::min<int>(map_w, static_cast<int>(shown.front().size()));
    // One step fixed: ranks from the left; steps end at the right edge, as every sparkline and heatmap here.
    const int x0 = frame_.fixed == Fixed::step ? map_x : map_x + map_w - cells_w;
    HeatmapOptions options;
    options.log_scale = !relative_;
    if (relative_) options.lo = kLevelLo, options.hi = kLevelHi;
    if (rows > 0 && cells_w > 0) draw_heatmap(buf, x0, y + 2, cells_w, rows, shown, glyphs, options);

    const std::size_t cursor = cursor_column();
    for (int r = 0; r < rows; ++r) {
        const std::size_t i = frame_.top + static_cast<std::size_t>(r);
        const bool sel = i == selected_;
        buf.text(x, y + 2 + r, fit_tensor_name(frame_.labels[static_cast<std::size_t>(r)], label_w, glyphs.unicode),
                 {sel ? Color::accent : Color::none, Color::none, static_cast<std::uint8_t>(sel ? kReverse : kPlain)},
                 label_w);
        const auto& marks = frame_.marks[static_cast<std::size_t>(r)];
        for (std::size_t c = 0; c < marks.size(); ++c) {
            const int mx = x0 + static_cast<int>(c) * cell_width_;
            if (mx >= x0 + cells_w) break;
            Style style = buf.at(mx, y + 2 + r).style;
            if (marks[c] != 0) {
                style.fg = Color::bad, style.attr = kBold;
                buf.put(mx, y + 2 + r, glyph(marks[c] == 2 ? U'◆' : U'•', glyphs.unicode), style);
            }
            if (sel && c == cursor) {  // the cursor: the cell in reverse video
                const Cell cell = buf.at(mx, y + 2 + r);
                Style s = cell.style;
                s.attr = static_cast<std::uint8_t>(s.attr | kReverse);
                buf.put(mx, y + 2 + r, cell.ch, s);
            }
        }
    }
    draw_column_axis(buf, x0, y + 2 + rows, frame_.fixed == Fixed::step ? map_w : cells_w, dim);
    buf.text(x, y + 3 + rows, cursor_line(width, glyphs.unicode), {}, width);
}

}  // namespace msmon::tui
