// Overview drawing and keys. Values print as shortest text, clipped to their column.
#include "tui/views/overview_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "core/text/number_text.hpp"
#include "store/derived_reader.hpp"
#include "tui/models/baseline_ratio.hpp"
#include "tui/tab_table.hpp"
#include "tui/views/overview_points.hpp"
#include "tui/views/view_deps.hpp"
#include "tui/widgets/downsample.hpp"
#include "tui/widgets/sparkline.hpp"
#include "tui/widgets/step_math.hpp"

namespace msmon::tui {

namespace {

constexpr std::int64_t kWindowSteps = 2000;

}  // namespace

OverviewView::OverviewView(SharedSelection& shared, IncidentIndex& incidents, std::function<void()> open_chart)
    : shared_(shared), incidents_(incidents), open_chart_(std::move(open_chart)) {
    // One binding per line reads as a table.
    // clang-format off
    keys_ = {
        {{kKeyDown, 'j'}, "j/Down", "next rank", [this] { return move(1); }},
        {{kKeyUp, 'k'}, "k/Up", "previous rank", [this] { return move(-1); }},
        {{kKeyPageDown}, "PgDn", "next page of ranks", [this] { return move(rows_visible_); }},
        {{kKeyPageUp}, "PgUp", "previous page of ranks", [this] { return move(-rows_visible_); }},
        {{kKeyHome, 'g'}, "g/Home", "first rank", [this] { return move(-1000000000); }},
        {{kKeyEnd, 'G'}, "G/End", "last rank", [this] { return move(1000000000); }},
        {{kKeyEnter}, "Enter", "chart of the selected rank", [this] {
             if (const auto order = sorted_rows(); !order.empty())  // the row seen highlighted
                 shared_.focus_rank = model_.rows[order[selected_position(order)]].rank;
             open_chart_();
             return Reaction::reload;
         }},
        {{']'}, "]", "next kind (grad_reduced, actv, loss, ...)", [this] { return cycle_kind(1); }},
        {{'['}, "[", "previous kind", [this] { return cycle_kind(-1); }},
        {{'o'}, "o", "next op (norm, max, min, mean, ...)", [this] { return cycle_op(); }},
        {{'s'}, "s", "sort by rank / latest value / deviation from the other ranks / divergence from the baseline", [this] {
             sort_ = sort_ == Sort::rank     ? Sort::latest
                     : sort_ == Sort::latest ? Sort::deviation
                     : sort_ == Sort::deviation && shared_.baseline ? Sort::baseline
                                                                   : Sort::rank;
             return Reaction::reload;
         }},
        {{'v'}, "v", "view: the heatmap of every rank or the list (the heatmap when ranks outnumber rows)", [this] {
             layout_ = heatmap_shown_ ? Layout::list : Layout::heatmap;
             return Reaction::reload;
         }},
        {{kKeyLeft, 'h'}, "h/Left", "heatmap: pan to earlier steps", [this] { return pan_heatmap(-1); }},
        {{kKeyRight, 'l'}, "l/Right", "heatmap: pan to later steps (to the latest: follow them again)", [this] {
             return pan_heatmap(1);
         }},
        {{'0'}, "0", "heatmap: the whole run on the screen's width, or the latest steps again", [this] {
             return toggle_whole_run();
         }},
        {{'L'}, "L", "log scale for sparklines and heatmap", [this] {
             log_scale_ = !log_scale_;
             return Reaction::redraw;
         }},
    };
    // clang-format on
}

void OverviewView::collect(Reader& reader) {
    incidents_.update(reader);  // one count unless anomalies came in
    // Until the user picks a statistic, the default follows the data (default_selection): not frozen at whatever
    // arrived first. A pick is any kind or op other than the default's.
    const bool picked =
        !shared_.series.kind.empty() && (shared_.series.kind != defaulted_.kind || shared_.series.op != defaulted_.op);
    model_ = collect_overview(reader, picked ? shared_.series : SeriesSelection{{}, {}, shared_.series.name_regex},
                              kWindowSteps, incidents_.marks());
    if (!picked) defaulted_ = model_.selection;
    showing_default_ = !picked;
    shared_.series = model_.selection;
    // Pipeline stages, from a stored kind's tensors (a derived kind is computed, not listed cheaply), read again when
    // the ranks or the kind change or after a minute; past 512 ranks reading every rank's tensors would hold the
    // frame up: not grouped.
    std::string layout_kind = is_derived_kind(model_.selection.kind) ? std::string() : model_.selection.kind;
    for (const auto& [kind, ops] : model_.catalog.kinds)
        if (layout_kind.empty() && !is_derived_kind(kind)) layout_kind = kind;
    if (!layout_kind.empty() && model_.catalog.ranks.size() <= 512)
        stage_layout_.update(reader, layout_kind, model_.catalog.ranks, std::chrono::seconds(60));
    else stage_layout_ = RankLayout{};
    collect_heatmap(reader);
    collect_baseline();
    // The selection is a rank, kept as the rows re-sort; this runs on every refresh, also behind other tabs, so it
    // never moves the selection, only starts one (the first row) when there is none.
    for (const auto& row : model_.rows)
        if (row.rank == shared_.focus_rank) return;
    if (!model_.rows.empty()) shared_.focus_rank = model_.rows[sorted_rows().front()].rank;
}

void OverviewView::collect_baseline() {
    baseline_distance_.clear();
    baseline_summary_.clear();
    if (!shared_.baseline) {
        if (sort_ == Sort::baseline) sort_ = Sort::rank;  // the baseline was dropped
        return;
    }
    const auto& sel = model_.selection;
    std::map<int, std::vector<StepValue>> base;
    for (auto& rs : shared_.baseline->rank_series({sel.kind, sel.op, sel.name_regex, kWindowSteps, {}}))
        base[rs.rank] = std::move(rs.points);
    for (const auto& row : model_.rows) {
        const auto it = base.find(row.rank);
        if (it == base.end()) continue;
        const BaselineRatio r = ratio_to_baseline(row.points, it->second);
        if (r.points.empty()) continue;
        baseline_distance_[row.rank] = std::abs(std::log(std::abs(r.farthest)));
        baseline_summary_[row.rank] = r.summary;
    }
}

std::size_t OverviewView::selected_position(const std::vector<std::size_t>& order) const {
    for (std::size_t pos = 0; pos < order.size(); ++pos)
        if (model_.rows[order[pos]].rank == shared_.focus_rank) return pos;
    return 0;
}

std::vector<std::size_t> OverviewView::sorted_rows() const {
    std::vector<std::size_t> idx(model_.rows.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    // Under pipeline parallelism a stage's ranks hold other layers than the next stage's: rows go stage by stage,
    // and a rank deviates from its own stage's median.
    const bool staged = stage_layout_.stages().size() > 1;
    const auto stage = [&](std::size_t i) { return staged ? stage_layout_.stage_of(model_.rows[i].rank) : 0; };
    if (sort_ == Sort::rank) {
        std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return stage(a) < stage(b); });
        return idx;
    }
    std::map<std::size_t, std::vector<double>> latest;
    for (std::size_t i = 0; i < model_.rows.size(); ++i)
        if (std::isfinite(model_.rows[i].latest)) latest[stage(i)].push_back(model_.rows[i].latest);
    std::map<std::size_t, double> median;
    for (auto& [s, v] : latest) {
        std::sort(v.begin(), v.end());
        median[s] = v[v.size() / 2];
    }
    auto key = [&](std::size_t i) {
        if (sort_ == Sort::baseline) {  // no baseline value to compare with: last
            const auto it = baseline_distance_.find(model_.rows[i].rank);
            return it == baseline_distance_.end() ? -1.0 : it->second;
        }
        const double v = model_.rows[i].latest;
        if (!std::isfinite(v)) return std::numeric_limits<double>::infinity();  // NaN/Inf first: they are the news
        return sort_ == Sort::latest ? v : std::abs(v - median[stage(i)]);
    };
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
        if (stage(a) != stage(b)) return stage(a) < stage(b);
        return key(a) > key(b);
    });
    return idx;
}

Reaction OverviewView::move(int delta) {
    if (model_.rows.empty()) return Reaction::none;
    const auto order = sorted_rows();
    const long next =
        std::clamp<long>(static_cast<long>(selected_position(order)) + delta, 0, static_cast<long>(order.size()) - 1);
    shared_.focus_rank = model_.rows[order[static_cast<std::size_t>(next)]].rank;
    return Reaction::redraw;
}

Reaction OverviewView::cycle_kind(int delta) {
    const auto& kinds = model_.catalog.kinds;
    if (kinds.empty()) return Reaction::none;
    std::size_t i = 0;
    for (; i < kinds.size(); ++i)
        if (kinds[i].first == shared_.series.kind) break;
    i = (i + kinds.size() + static_cast<std::size_t>(delta + static_cast<int>(kinds.size()))) % kinds.size();
    shared_.series.kind = kinds[i].first;
    const auto& ops = kinds[i].second;
    if (std::find(ops.begin(), ops.end(), shared_.series.op) == ops.end())
        shared_.series.op = std::find(ops.begin(), ops.end(), "norm") != ops.end() ? "norm"
                            : ops.empty()                                          ? ""
                                                                                   : ops.front();
    return Reaction::reload;
}

Reaction OverviewView::cycle_op() {
    for (const auto& [kind, ops] : model_.catalog.kinds) {
        if (kind != shared_.series.kind || ops.empty()) continue;
        auto it = std::find(ops.begin(), ops.end(), shared_.series.op);
        shared_.series.op = (it == ops.end() || it + 1 == ops.end()) ? ops.front() : *(it + 1);
        return Reaction::reload;
    }
    return Reaction::none;
}

Reaction OverviewView::click(int, int y) {
    if (heatmap_shown_ || y < list_y_) return Reaction::none;
    const std::size_t row = top_ + static_cast<std::size_t>(y - list_y_);
    if (row >= model_.rows.size()) return Reaction::none;
    shared_.focus_rank = model_.rows[sorted_rows()[row]].rank;
    return Reaction::redraw;
}

void OverviewView::draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) {
    const Style head{Color::accent, Color::none, kBold};
    const Style dim{Color::dim, Color::none, kPlain};
    const auto& sel = model_.selection;
    std::string title = "kind " + (sel.kind.empty() ? std::string("-") : sel.kind) + "  op " + sel.op;
    if (sel.name_regex) title += "  filter /" + *sel.name_regex + "/";
    title += std::string("  sort ") + (sort_ == Sort::rank       ? "rank"
                                       : sort_ == Sort::latest   ? "latest"
                                       : sort_ == Sort::baseline ? "divergence from the baseline"
                                                                 : "deviation");
    if (sort_ == Sort::baseline)
        if (const auto it = baseline_summary_.find(shared_.focus_rank); it != baseline_summary_.end())
            title += "  rank " + std::to_string(shared_.focus_rank) + " " + it->second;
    // The steps (the status line has them too) and the stages only where they fit: a narrow title ends with its
    // last whole part rather than a cut one.
    const auto append_if_room = [&](const std::string& part) {
        if (display_width(title) + display_width(part) <= width) title += part;
    };
    if (model_.step_hi >= model_.step_lo)
        append_if_room("  steps " + std::to_string(model_.step_lo) + "-" + std::to_string(model_.step_hi));
    if (stage_layout_.stages().size() > 1) append_if_room("  " + describe_stages(stage_layout_.stages()));
    buf.text(x, y, title, head, width);
    if (model_.rows.empty()) {
        buf.text(x, y + 2,
                 sel.kind.empty() ? "no data yet: waiting for the first values" : "no ranks have this statistic", dim,
                 width);
        return;
    }
    const int list_h = height - 2;
    const bool heatmap =
        layout_ == Layout::heatmap || (layout_ == Layout::automatic && static_cast<int>(model_.rows.size()) > list_h);
    heatmap_shown_ = heatmap;
    const auto order = sorted_rows();
    const int value_w = 10;
    const int label_w = 7;
    const int spark_w = std::max(4, width - label_w - 3 * (value_w + 1) - 3);
    if (heatmap) {
        draw_heatmap_view(buf, x, y, width, height, glyphs, order);
        return;
    }
    // As wide as the screen: a fixed buffer lost latest/min/max at 185 columns.
    const auto pad_right = [](std::string s, int w) {
        return s.size() < static_cast<std::size_t>(w) ? s + std::string(w - s.size(), ' ') : s;
    };
    const auto pad_left = [](std::string s, int w) {
        return s.size() < static_cast<std::size_t>(w) ? std::string(w - s.size(), ' ') + s : s;
    };
    // How a rank's value combines the kind's tensors, and whether the statistic is the default (overview_model.hpp).
    std::string history = "history";
    if (const std::string across = across_tensors(sel.op); !across.empty()) history += ": " + across;
    if (showing_default_) history += " (the default)";
    if (static_cast<int>(history.size()) >= spark_w) history = "history";
    const std::string hdr = pad_right("rank", label_w) + pad_right(history, spark_w) + " " +
                            pad_left("latest", value_w) + " " + pad_left("min", value_w) + " " +
                            pad_left("max", value_w);
    buf.text(x, y + 1, hdr, dim, width);
    rows_visible_ = list_h;
    list_y_ = y + 2;
    const std::size_t selected = selected_position(order);
    if (selected < top_) top_ = selected;
    if (selected >= top_ + static_cast<std::size_t>(list_h)) top_ = selected - static_cast<std::size_t>(list_h) + 1;
    for (int r = 0; r < list_h && top_ + static_cast<std::size_t>(r) < order.size(); ++r) {
        const std::size_t pos = top_ + static_cast<std::size_t>(r);
        const OverviewRow& row = model_.rows[order[pos]];
        const int ry = y + 2 + r;
        const bool sel_row = pos == selected;
        const Style label_style{sel_row ? Color::accent : Color::none, Color::none,
                                static_cast<std::uint8_t>(sel_row ? kReverse | kBold : kPlain)};
        char label[16];
        std::snprintf(label, sizeof label, "%s%-5d", row.anomaly_steps.empty() && !row.has_nan ? " " : "!", row.rank);
        buf.text(x, ry, label, label_style, label_w - 1);
        // The last steps that fit, one column per step; the newest step at the right edge.
        // While a backlog's history is read, its unread steps belong to the run too: drawn as unread.
        const std::int64_t lo =
            shared_.unread_steps ? std::min(model_.step_lo, shared_.unread_steps->first) : model_.step_lo;
        const std::int64_t first = std::max(lo, sat_add(sat_sub(model_.step_hi, spark_w), 1));
        const int span = static_cast<int>(model_.step_hi - first + 1);
        auto& cols = row_cols_;
        downsample_minmax_into(tail_points(row.points, first, scratch_), first, model_.step_hi, std::max(1, span),
                               cols);
        for (auto s : row.anomaly_steps)
            if (s >= first)
                for (auto& c : cols)
                    if (s >= c.first_step && s <= c.last_step) c.marked = true;
        SparklineOptions so;
        so.log_scale = log_scale_;
        so.style = {Color::series0, Color::none, kPlain};
        so.unread = shared_.unread_steps;
        draw_sparkline(buf, x + label_w, ry, spark_w, cols, glyphs, so);
        const Style vs{std::isfinite(row.latest) ? Color::none : Color::bad, Color::none, kPlain};
        int vx = x + label_w + spark_w + 1;
        for (double v : {row.latest, row.min, row.max}) {
            const std::string t = row.points.empty() ? "-" : short_number(v);
            buf.text(vx + value_w - std::min<int>(value_w, static_cast<int>(t.size())), ry, t, vs, value_w);
            vx += value_w + 1;
        }
    }
}

std::unique_ptr<View> make_overview_view(ViewDeps& deps) {
    return std::make_unique<OverviewView>(deps.shared, deps.incidents, deps.open_chart);
}

}  // namespace msmon::tui
