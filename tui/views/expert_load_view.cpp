// Expert-load view: header with the layer and its imbalance, one line of every layer's imbalance, then experts ×
// steps as a heatmap beside the latest load per expert, hottest first.
#include "tui/views/expert_load_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "core/text/counted.hpp"
#include "tui/tab_table.hpp"
#include "tui/views/view_deps.hpp"
#include "tui/widgets/heatmap.hpp"
#include "tui/widgets/step_axis.hpp"
#include "tui/widgets/text_wrap.hpp"

namespace msmon::tui {

namespace {

std::string fixed(double v, int decimals) {
    if (!std::isfinite(v)) return "-";
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

}  // namespace

ExpertLoadView::ExpertLoadView() {
    // One binding per line reads as a table.
    // clang-format off
    keys_ = {
        {{kKeyDown, 'j'}, "j/Down", "next MoE layer", [this] {
             if (layer_ + 1 < model_.layers.size()) ++layer_;
             jump_to_flagged_ = false;
             return Reaction::redraw;
         }},
        {{kKeyUp, 'k'}, "k/Up", "previous MoE layer", [this] {
             if (layer_ > 0) --layer_;
             jump_to_flagged_ = false;
             return Reaction::redraw;
         }},
        {{'f'}, "f", "next flagged (imbalanced) layer", [this] {
             jump_to_flagged_ = false;
             for (std::size_t i = 1; i <= model_.layers.size(); ++i) {
                 const std::size_t l = (layer_ + i) % model_.layers.size();
                 if (model_.layers[l].flagged()) {
                     layer_ = l;
                     break;
                 }
             }
             return Reaction::redraw;
         }},
        {{'r'}, "r", "rank: every rank summed, then each rank", [this] {
             if (model_.ranks.empty()) return Reaction::none;
             if (!rank_) {
                 rank_ = model_.ranks.front();
             } else {
                 auto it = std::upper_bound(model_.ranks.begin(), model_.ranks.end(), *rank_);
                 if (it == model_.ranks.end()) rank_.reset();
                 else rank_ = *it;
             }
             return Reaction::reload;
         }},
    };
    // clang-format on
}

void ExpertLoadView::collect(Reader& reader) {
    model_ = collect_expert_load(reader, rank_);
    // Until a layer is chosen, the first flagged one is shown, also when it becomes flagged while the tab is open.
    if (jump_to_flagged_)
        for (std::size_t i = 0; i < model_.layers.size(); ++i)
            if (model_.layers[i].flagged()) {
                layer_ = i;
                jump_to_flagged_ = false;
                break;
            }
    if (layer_ >= model_.layers.size()) layer_ = model_.layers.empty() ? 0 : model_.layers.size() - 1;
}

void ExpertLoadView::draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) {
    const Style dim{Color::dim, Color::none, kPlain};
    const Style head{Color::accent, Color::none, kBold};
    const Style bad{Color::bad, Color::none, kBold};
    if (model_.layers.empty()) {
        int row = y + 1;
        for (const auto& line : wrap_text(
                 "no expert_load yet: MoE runs write it to TensorBoard (expert_load/<layer>, one value per expert)",
                 width - 4, 2))
            if (row < y + height) buf.text(x + 2, row++, line, dim, width - 4);
        return;
    }
    const ExpertLayer& L = model_.layers[layer_];
    const std::string who =
        rank_ ? "rank " + std::to_string(*rank_) : "all " + counted(model_.ranks.size(), "rank") + " summed";
    buf.text(x, y,
             L.name + " (" + std::to_string(layer_ + 1) + "/" + std::to_string(model_.layers.size()) + ")  " + who +
                 "  steps " + std::to_string(L.first_step) + "-" + std::to_string(L.last_step),
             head, width);
    // Every layer's imbalance on one line: the layer to look at is visible from any other.
    int cx = x;
    cx += buf.text(cx, y + 1, "max/mean:", dim, width);
    for (std::size_t i = 0; i < model_.layers.size() && cx < x + width; ++i) {
        const auto& l = model_.layers[i];
        const std::string item = " " + l.name + " " + fixed(l.imbalance, 2) + (l.flagged() ? "!" : "");
        Style s = l.flagged() ? bad : Style{};
        if (i == layer_) s.attr = static_cast<std::uint8_t>(s.attr | kReverse);
        cx += buf.text(cx, y + 1, item, s, x + width - cx);
    }
    double total = 0;
    for (double v : L.current)
        if (std::isfinite(v)) total += v;
    if (L.flagged() && L.hottest >= 0) {
        const auto& hot = L.experts[static_cast<std::size_t>(L.hottest)];
        buf.text(x, y + 2,
                 "IMBALANCED: " + hot.label + " has " + fixed(L.imbalance, 2) + "x the mean load (" +
                     fixed(total > 0 ? 100.0 * L.max / total : 0, 0) + "% of tokens) at step " +
                     std::to_string(L.current_step) + " - routing collapse?",
                 bad, width);
    } else {
        buf.text(x, y + 2,
                 "balanced: max/mean " + fixed(L.imbalance, 2) + " < " + fixed(kImbalanceFlag, 1) + " at step " +
                     std::to_string(L.current_step),
                 dim, width);
    }
    const int panel_w = std::min(30, width / 2);
    const int label_w = 7;
    const int map_w = width - panel_w - label_w - 1;
    const int top = y + 4, rows_h = height - 4;
    if (rows_h <= 0) return;
    buf.text(x, y + 3, "experts x steps (load)", dim, label_w + map_w);
    buf.text(x + width - panel_w, y + 3, "now      load  x mean", dim, panel_w);
    if (map_w > 4 && rows_h > 1) {
        // The whole history on the map's width (each column the max of its steps), a step axis under it: where a
        // collapse began is read off the axis.
        const std::int64_t last = std::max(L.last_step, L.first_step);
        const int columns = static_cast<int>(std::min<std::int64_t>(map_w, last - L.first_step + 1));
        std::vector<std::vector<ColumnStat>> rows;
        for (const auto& e : L.experts) rows.push_back(downsample_minmax(e.points, L.first_step, last, columns));
        const int map_h = std::min<int>(rows_h - 1, static_cast<int>(rows.size()));
        draw_heatmap(buf, x + label_w, top, map_w, map_h, rows, glyphs, HeatmapOptions{});
        for (int r = 0; r < map_h; ++r) {
            const std::size_t i = heatmap_first_row(static_cast<std::size_t>(r), rows.size(), map_h);
            const bool hot = L.flagged() && static_cast<int>(i) == L.hottest;
            buf.text(x, top + r, L.experts[i].label, hot ? bad : dim, label_w - 1);
        }
        draw_step_axis(buf, x + label_w + map_w - columns, top + map_h, StepColumns(L.first_step, last, columns), dim);
    }
    // The latest load per expert, hottest first, so the expert that matters is always on screen.
    std::vector<std::size_t> order(L.experts.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const double va = std::isfinite(L.current[a]) ? L.current[a] : -1,
                     vb = std::isfinite(L.current[b]) ? L.current[b] : -1;
        return va > vb;
    });
    for (int r = 0; r < rows_h && static_cast<std::size_t>(r) < order.size(); ++r) {
        const std::size_t i = order[static_cast<std::size_t>(r)];
        const double v = L.current[i];
        const double ratio = L.mean > 0 && std::isfinite(v) ? v / L.mean : NAN;
        const bool hot = std::isfinite(ratio) && ratio >= kImbalanceFlag;
        const bool cold = std::isfinite(ratio) && ratio < 0.25;
        char row[96];
        std::snprintf(row, sizeof row, "%-6s %9s %6sx %s", L.experts[i].label.c_str(), fixed(v, 0).c_str(),
                      fixed(ratio, 2).c_str(),
                      hot    ? "HOT"
                      : cold ? "cold"
                             : "");
        buf.text(x + width - panel_w, top + r, row,
                 hot    ? bad
                 : cold ? Style{Color::warn, Color::none, kPlain}
                        : Style{},
                 panel_w);
    }
}

std::unique_ptr<View> make_expert_load_view(ViewDeps&) {
    return std::make_unique<ExpertLoadView>();
}

}  // namespace msmon::tui
