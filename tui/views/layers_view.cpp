// Layers view: keys and what they move. Reading is in layers_view_collect.cpp, drawing in layers_view_draw.cpp.
#include "tui/views/layers_view.hpp"

#include <algorithm>

#include "core/text/name_pattern.hpp"
#include "tui/models/layer_rows.hpp"
#include "tui/tab_table.hpp"
#include "tui/views/view_deps.hpp"
#include "tui/widgets/step_math.hpp"

namespace msmon::tui {

LayersView::LayersView(SharedSelection& shared, IncidentIndex& incidents, std::function<void()> open_chart)
    : shared_(shared), incidents_(incidents), open_chart_(std::move(open_chart)) {
    const auto moved = [this](auto f) { return [this, f] { return user_moved(f()); }; };
    // One binding per line reads as a table.
    // clang-format off
    keys_ = {
        {{kKeyDown, 'j'}, "j/Down", "next row", moved([this] { return move_row(1); })},
        {{kKeyUp, 'k'}, "k/Up", "previous row", moved([this] { return move_row(-1); })},
        {{kKeyPageDown}, "PgDn", "next page of rows", moved([this] { return move_row(rows_visible_); })},
        {{kKeyPageUp}, "PgUp", "previous page of rows", moved([this] { return move_row(-rows_visible_); })},
        {{kKeyHome, 'g'}, "g/Home", "first row", moved([this] { return move_row(-1000000000L); })},
        {{kKeyEnd, 'G'}, "G/End", "last row", moved([this] { return move_row(1000000000L); })},
        {{kKeyLeft, 'h'}, "h/Left", "cursor one column left (a step, or a rank when one step is fixed)", moved([this] { return move_column(-1); })},
        {{kKeyRight, 'l'}, "l/Right", "cursor one column right (at the latest step: follow new steps)", moved([this] { return move_column(1); })},
        {{','}, ",", "one step earlier (the cursor's, or the fixed step)", moved([this] { return move_step(-1); })},
        {{'.'}, ".", "one step later", moved([this] { return move_step(1); })},
        {{'0'}, "0", "back to the latest step, followed as new steps arrive", moved([this] {
             cursor_step_.reset();
             return Reaction::reload;
         })},
        {{kKeyEnter}, "Enter", "chart the cell's tensor at its step, its rank in front", [this] { return chart(); }},
        {{'d'}, "d", "fix another dimension at the cursor: one rank, one step, one tensor", moved([this] { return switch_fixed(); })},
        {{' '}, "Space", "fold the selected row's layer into one row (its most extreme tensor a cell); again: unfold", moved([this] { return toggle_fold(); })},
        {{'z'}, "z", "fold every layer; again: unfold them all", moved([this] { return fold_all(); })},
        {{'m'}, "m", "micro-steps: folded into their step, or a row each", moved([this] {
             micro_steps_apart_ = !micro_steps_apart_;
             keep_selected_tensor();
             return Reaction::reload;
         })},
        {{'!'}, "!", "go to the cell where the top incident began", moved([this] { return go_to_origin(); })},
        {{']'}, "]", "next kind (actv, grad_reduced, ...)", moved([this] { return cycle_kind(1); })},
        {{'['}, "[", "previous kind", moved([this] { return cycle_kind(-1); })},
        {{'o'}, "o", "next op (norm, max, min, mean, ...)", [this] { return cycle_op(); }},
        {{'r'}, "r", "next rank", moved([this] { return next_rank(1); })},
        {{'R'}, "R", "previous rank", moved([this] { return next_rank(-1); })},
        {{'a'}, "a", "colour: against the cell's own last 8 steps, by value (log scale), or against the baseline run", [this] {
             if (relative_ && !by_baseline_) relative_ = false;
             else if (!relative_ && shared_.baseline) relative_ = by_baseline_ = true;
             else relative_ = true, by_baseline_ = false;
             return Reaction::reload;
         }},
    };
    // clang-format on
}

std::optional<LayersView::Target> LayersView::cursor_target() const {
    return selected_ >= frame_.top ? target(selected_ - frame_.top, cursor_column()) : std::nullopt;
}

void LayersView::keep_selected_tensor() {
    const auto at = cursor_target();
    if (at && !go_to_) go_to_ = GoTo{rank_, cursor_step_, at->name};
}

Reaction LayersView::user_moved(Reaction r) {
    following_ = false;
    return r;
}

std::size_t LayersView::row_count() const {
    return fixed_ == Fixed::tensor ? frame_.row_ranks.size() : frame_.grid.size();
}

Reaction LayersView::move_row(long delta) {
    const std::size_t n = row_count();
    if (n == 0) return Reaction::none;
    selected_ =
        static_cast<std::size_t>(std::clamp<long>(static_cast<long>(selected_) + delta, 0, static_cast<long>(n) - 1));
    if (fixed_ == Fixed::tensor) rank_ = frame_.row_ranks[selected_];
    if (selected_ < top_ || selected_ >= top_ + static_cast<std::size_t>(rows_visible_)) {
        keep_selection_visible();
        return Reaction::reload;  // other rows: their series
    }
    return Reaction::redraw;
}

Reaction LayersView::move_column(long delta) {
    if (fixed_ == Fixed::step) return next_rank(static_cast<int>(delta));
    return move_step(delta);
}

Reaction LayersView::move_step(long delta) {
    if (catalog_.max_step < catalog_.min_step) return Reaction::none;
    const std::int64_t from = cursor_step_.value_or(catalog_.max_step);
    const std::int64_t to = std::clamp(sat_add(from, delta), catalog_.min_step, catalog_.max_step);
    if (delta > 0 && to == catalog_.max_step) cursor_step_.reset();  // at the latest: follow new steps
    else cursor_step_ = to;
    // Inside the steps read (and not the fixed step): only the cursor moves.
    const bool inside =
        fixed_ != Fixed::step && cursor_step_ && *cursor_step_ >= frame_.lo && *cursor_step_ <= frame_.hi;
    return inside ? Reaction::redraw : Reaction::reload;
}

Reaction LayersView::cycle_kind(int delta) {
    const auto& kinds = catalog_.kinds;
    if (kinds.empty()) return Reaction::none;
    std::size_t i = 0;
    while (i < kinds.size() && kinds[i].first != kind_) ++i;
    const auto n = static_cast<long>(kinds.size());
    kind_ = kinds[static_cast<std::size_t>(((static_cast<long>(i) + delta) % n + n) % n)].first;
    if (fixed_ != Fixed::tensor) selected_ = top_ = 0;
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
    // The ranks in the order shown: the rows with one tensor fixed (those holding it), the columns stage by stage
    // with one step fixed, else every rank.
    const auto& ranks = frame_.fixed == Fixed::tensor && fixed_ == Fixed::tensor ? frame_.row_ranks
                        : frame_.fixed == Fixed::step && fixed_ == Fixed::step && !frame_.ordered_ranks.empty()
                            ? frame_.ordered_ranks
                            : catalog_.ranks;
    if (ranks.empty()) return Reaction::none;
    auto it = std::find(ranks.begin(), ranks.end(), rank_);
    const auto n = static_cast<long>(ranks.size());
    const long i = it == ranks.end() ? 0 : ((it - ranks.begin()) + delta % n + n) % n;
    rank_ = ranks[static_cast<std::size_t>(i)];
    if (fixed_ == Fixed::tensor) selected_ = static_cast<std::size_t>(i);
    return Reaction::reload;
}

Reaction LayersView::switch_fixed() {
    const auto at = cursor_target();
    switch (fixed_) {
        case Fixed::rank:  // the cursor's step on every rank, the same tensor selected
            fixed_ = Fixed::step;
            break;
        case Fixed::step:  // the selected tensor on every rank
            if (!at || at->name.empty()) return Reaction::none;
            tensor_ = at->name;
            fixed_ = Fixed::tensor;
            break;
        case Fixed::tensor:  // the rank in focus, the tensor selected
            fixed_ = Fixed::rank;
            break;
    }
    go_to_ = GoTo{rank_, cursor_step_, fixed_ == Fixed::step && at ? at->name : tensor_};
    return Reaction::reload;
}

Reaction LayersView::toggle_fold() {
    if (fixed_ == Fixed::tensor || selected_ >= frame_.grid.size() || !frame_.grid[selected_].layer)
        return Reaction::none;
    const int layer = *frame_.grid[selected_].layer;
    if (!folded_layers_.erase(layer)) folded_layers_.insert(layer);
    keep_selected_tensor();
    return Reaction::reload;
}

Reaction LayersView::fold_all() {
    if (fixed_ == Fixed::tensor) return Reaction::none;
    if (!folded_layers_.empty()) {
        folded_layers_.clear();
    } else {
        for (const auto& row : frame_.rows)
            if (const auto layer = layer_of(row.name)) folded_layers_.insert(*layer);
    }
    keep_selected_tensor();
    return Reaction::reload;
}

Reaction LayersView::go_to_origin() {
    if (!incidents_.grouped() || incidents_.incidents().empty()) return Reaction::none;
    const AnomalyRecord& a = incidents_.anomalies()[incidents_.incidents().front().origin];
    const bool module_kind =
        std::any_of(catalog_.kinds.begin(), catalog_.kinds.end(), [&](const auto& k) { return k.first == a.kind; });
    if (module_kind) kind_ = a.kind;
    fixed_ = Fixed::rank;
    frame_.lo = 0, frame_.hi = -1;  // steps around the origin's
    go_to_ = GoTo{a.rank, a.step, module_kind ? a.name : std::string()};
    return Reaction::reload;
}

Reaction LayersView::chart() {
    const auto t = cursor_target();
    if (!t || t->name.empty()) return Reaction::none;
    ChartDrill drill;
    drill.series = {frame_.kind, frame_.op, exact_name_pattern(t->name)};  // what the cell was read as
    drill.rank = t->rank;
    shared_.focus_step = t->step;
    shared_.drill = std::move(drill);
    ++shared_.drills;
    open_chart_();
    return Reaction::reload;
}

bool LayersView::set_filter(const std::optional<std::string>& text) {
    std::string error;
    filter_ = text ? ModuleFilter::parse(*text, error) : std::nullopt;
    keep_selected_tensor();  // if the filter lets it through; else the row at the same place
    return true;
}

std::optional<std::string> LayersView::check_filter(const std::string& text) const {
    std::string error;
    if (ModuleFilter::parse(text, error)) return std::nullopt;
    return error;
}

std::unique_ptr<View> make_layers_view(ViewDeps& deps) {
    return std::make_unique<LayersView>(deps.shared, deps.incidents, deps.open_chart);
}

}  // namespace msmon::tui
