// Layers view: what collect() reads. Only the shown rows' series are read (Reader::module_series), over the
// shown steps and the 8 before them (each cell's reference).
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "tui/models/layer_rows.hpp"
#include "tui/models/pipeline_stages.hpp"
#include "tui/views/layers_view.hpp"
#include "tui/widgets/step_math.hpp"

namespace msmon::tui {

namespace {

constexpr std::size_t kHistory = 8;  // a cell's reference: the median of its tensor's previous 8 values

bool has(const std::vector<int>& v, int x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

// One shown row under construction: each member tensor's cells across the columns, folded at the end.
struct RowCells {
    std::vector<std::vector<ColumnStat>> values, levels;
    std::vector<std::string> names;
};

}  // namespace

void LayersView::choose_kind_and_op() {
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
}

// Until a key moves the cursor: the cell where the most severe incident began, followed as ranks' files arrive (a
// NaN seen first where it spread to moves to its origin once the origin's rank is read); with none, the
// Overview's rank at the latest step.
void LayersView::follow_incident() {
    const bool top_incident = incidents_.grouped() && !incidents_.incidents().empty();
    if (top_incident) {
        const AnomalyRecord& a = incidents_.anomalies()[incidents_.incidents().front().origin];
        if (has(catalog_.ranks, a.rank)) {
            go_to_ = GoTo{a.rank, a.step, a.kind == kind_ ? a.name : std::string()};
            return;
        }
    }
    if (has(catalog_.ranks, shared_.focus_rank)) rank_ = shared_.focus_rank;
}

void LayersView::collect(Reader& reader) {
    catalog_ = reader.catalog();
    choose_kind_and_op();
    incidents_.update(reader);
    if (following_) follow_incident();
    if (go_to_) {
        rank_ = go_to_->rank;
        cursor_step_ = go_to_->step;
    }
    if (!has(catalog_.ranks, rank_)) rank_ = catalog_.ranks.empty() ? -1 : catalog_.ranks.front();
    if (cursor_step_ && catalog_.max_step >= catalog_.min_step)
        cursor_step_ = std::clamp(*cursor_step_, catalog_.min_step, catalog_.max_step);
    place_window();
    const std::int64_t lo = frame_.lo, hi = frame_.hi;
    frame_ = Frame{};
    frame_.fixed = fixed_, frame_.kind = kind_, frame_.op = op_, frame_.tensor = tensor_, frame_.rank = rank_;
    frame_.lo = lo, frame_.hi = hi;
    frame_.incident_cells = incident_cells(*incidents_.set(), kind_);
    if (!shared_.baseline) by_baseline_ = false;  // dropped (:baseline off)
    frame_.by_baseline = by_baseline_;
    if (!kind_.empty() && rank_ >= 0 && hi >= lo) {
        if (fixed_ == Fixed::tensor) read_tensor_rows(reader);
        else read_grid(reader);
    }
    go_to_.reset();
    frame_.rows_visible = rows_visible_, frame_.width = map_width_, frame_.top = top_;
    stale_ = false;
}

void LayersView::place_window() {
    if (catalog_.max_step < catalog_.min_step) {
        frame_.lo = 0, frame_.hi = -1;
        return;
    }
    if (fixed_ == Fixed::step) {
        frame_.lo = frame_.hi = cursor_step_.value_or(catalog_.max_step);
        return;
    }
    const std::int64_t columns = std::max(1, map_width_);
    const bool fresh = frame_.hi < frame_.lo || frame_.hi > catalog_.max_step || fixed_ != frame_.fixed;
    // Live, the window's right edge is the newest step for as long as the cursor (the incident's origin, or where
    // the user put it) stays in view: the steps after an origin come in as the job goes on.
    const bool cursor_fits_newest = cursor_step_ && *cursor_step_ >= sat_add(sat_sub(catalog_.max_step, columns), 1);
    const bool at_live_edge = !fresh && frame_.hi >= placed_at_max_;
    if (!cursor_step_) {
        frame_.hi = catalog_.max_step;
    } else if (cursor_fits_newest && (fresh || at_live_edge)) {
        frame_.hi = catalog_.max_step;
    } else if (fresh) {  // a cursor far back: its step in the middle, or as far right as the run allows
        frame_.hi = std::min(catalog_.max_step,
                             std::max(sat_add(*cursor_step_, columns / 2), sat_add(catalog_.min_step, columns - 1)));
    } else {  // the steps read before, moved only as far as the cursor needs
        if (at_live_edge) frame_.hi = std::min(catalog_.max_step, sat_add(*cursor_step_, columns - 1));
        if (*cursor_step_ > frame_.hi) frame_.hi = *cursor_step_;
        if (*cursor_step_ < sat_add(sat_sub(frame_.hi, columns), 1)) frame_.hi = sat_add(*cursor_step_, columns - 1);
    }
    frame_.lo = std::max(catalog_.min_step, sat_add(sat_sub(frame_.hi, columns), 1));
    placed_at_max_ = catalog_.max_step;
}

void LayersView::keep_selection_visible() {
    const std::size_t n = row_count();
    selected_ = n == 0 ? 0 : std::min(selected_, n - 1);
    const auto visible = static_cast<std::size_t>(std::max(1, rows_visible_));
    if (selected_ < top_) top_ = selected_;
    if (selected_ >= top_ + visible) top_ = selected_ - visible + 1;
    if (top_ > 0 && top_ + visible > n) top_ = n > visible ? n - visible : 0;
}

std::vector<ModuleRow> LayersView::rows_of(Reader& reader, int rank) {
    return reader.module_rows(kind_, rank);
}

// Fixed::rank (tensors x steps on one rank) and Fixed::step (tensors x ranks at one step).
void LayersView::read_grid(Reader& reader) {
    if (fixed_ == Fixed::step) {
        // The whole model: every rank's tensors, each where its layer puts it (pipeline stages hold slices of it).
        layout_.update(reader, kind_, catalog_.ranks);
        std::vector<int> ordered;  // stage by stage
        std::vector<const std::vector<ModuleRow>*> in_order;
        for (const auto& stage : layout_.stages())
            for (int r : stage.ranks) ordered.push_back(r), in_order.push_back(&layout_.rows().at(r));
        frame_.rows = model_rows(in_order);
        frame_.stages = describe_stages(layout_.stages());
        frame_.ordered_ranks = ordered;
        // The ranks across: every rank when they fit (a few columns each), else a page holding the rank in focus.
        const int n = static_cast<int>(ordered.size());
        cell_width_ = std::clamp(map_width_ / std::max(1, n), 1, 4);
        const int per_page = std::max(1, map_width_ / cell_width_);
        const auto at = std::find(ordered.begin(), ordered.end(), rank_) - ordered.begin();
        const int first = (at < n ? static_cast<int>(at) : 0) / per_page * per_page;
        for (int i = first; i < n && i < first + per_page; ++i)
            frame_.column_ranks.push_back(ordered[static_cast<std::size_t>(i)]);
    } else {
        cell_width_ = 1;
        frame_.rows = rows_of(reader, rank_);
    }
    GridRowOptions options{micro_steps_apart_, folded_layers_, filter_ ? &*filter_ : nullptr};
    frame_.grid = grid_rows(frame_.rows, options);
    apply_go_to();
    keep_selection_visible();

    // The module rows the shown rows need, read once each.
    const std::size_t end = std::min(frame_.grid.size(), top_ + static_cast<std::size_t>(std::max(1, rows_visible_)));
    std::vector<ModuleRow> request_rows;
    std::map<std::size_t, std::size_t> series_of;  // module row -> request index
    for (std::size_t g = top_; g < end; ++g)
        for (const auto& tensor : frame_.grid[g].tensors)
            for (std::size_t i : tensor)
                if (series_of.emplace(i, request_rows.size()).second) request_rows.push_back(frame_.rows[i]);
    const SeriesWindow window{sat_sub(frame_.lo, static_cast<std::int64_t>(kHistory)), frame_.hi, 0, std::nullopt};
    const std::vector<int> ranks = fixed_ == Fixed::step ? frame_.column_ranks : std::vector<int>{rank_};
    std::vector<std::vector<std::vector<StepValue>>> series, base;  // per rank, per request row
    for (int r : ranks) series.push_back(reader.module_series({kind_, op_, r, request_rows, window}));
    if (frame_.by_baseline)
        for (int r : ranks) base.push_back(shared_.baseline->module_series({kind_, op_, r, request_rows, window}));

    for (std::size_t g = top_; g < end; ++g) {
        RowCells row;
        for (const auto& tensor : frame_.grid[g].tensors) {
            row.names.push_back(frame_.rows[tensor.front()].name);
            std::vector<ColumnStat> values, levels;
            for (std::size_t k = 0; k < ranks.size(); ++k) {
                std::vector<const std::vector<StepValue>*> parts, base_parts;
                for (std::size_t i : tensor) parts.push_back(&series[k][series_of[i]]);
                const auto folded = fold_micro_steps(parts, op_);
                auto v = step_cells(folded, frame_.lo, frame_.hi, false, kHistory);
                std::vector<ColumnStat> l;
                if (frame_.by_baseline) {
                    for (std::size_t i : tensor) base_parts.push_back(&base[k][series_of[i]]);
                    l = baseline_cells(folded, fold_micro_steps(base_parts, op_), frame_.lo, frame_.hi);
                } else {
                    l = step_cells(folded, frame_.lo, frame_.hi, true, kHistory);
                }
                values.insert(values.end(), v.begin(), v.end());
                levels.insert(levels.end(), l.begin(), l.end());
            }
            row.values.push_back(std::move(values));
            row.levels.push_back(std::move(levels));
        }
        frame_.value_winner.emplace_back(), frame_.level_winner.emplace_back();
        frame_.values.push_back(fold_cells(row.values, false, &frame_.value_winner.back()));
        frame_.levels.push_back(fold_cells(row.levels, true, &frame_.level_winner.back()));
        // Marks: any of the row's tensors at the column's rank and step.
        std::vector<std::uint8_t> marks(frame_.values.back().size(), 0);
        for (std::size_t c = 0; c < marks.size(); ++c) {
            const int rank = fixed_ == Fixed::step ? frame_.column_ranks[c] : rank_;
            const std::int64_t step = fixed_ == Fixed::step ? frame_.lo : frame_.lo + static_cast<std::int64_t>(c);
            for (const auto& name : row.names) {
                if (frame_.incident_cells.is_origin(rank, step, name)) marks[c] = 2;
                else if (marks[c] == 0 && frame_.incident_cells.has(rank, step, name)) marks[c] = 1;
            }
        }
        frame_.marks.push_back(std::move(marks));
        frame_.labels.push_back(frame_.grid[g].label);
    }
}

// Fixed::tensor: ranks x steps for one tensor (its micro-steps folded).
void LayersView::read_tensor_rows(Reader& reader) {
    cell_width_ = 1;
    // The ranks that hold the tensor, stage by stage (under pipeline parallelism, one stage's ranks).
    layout_.update(reader, kind_, catalog_.ranks);
    frame_.stages = describe_stages(layout_.stages());
    for (const auto& stage : layout_.stages())
        for (int r : stage.ranks) {
            const auto& rows = layout_.rows().at(r);
            const bool holds =
                std::any_of(rows.begin(), rows.end(), [&](const ModuleRow& m) { return m.name == tensor_; });
            if (holds) frame_.row_ranks.push_back(r);
            if (holds && frame_.rows.empty())
                for (const auto& m : rows)
                    if (m.name == tensor_) frame_.rows.push_back(m);
        }
    apply_go_to();
    keep_selection_visible();
    if (selected_ < frame_.row_ranks.size()) rank_ = frame_.row_ranks[selected_];
    if (frame_.rows.empty()) return;
    const SeriesWindow window{sat_sub(frame_.lo, static_cast<std::int64_t>(kHistory)), frame_.hi, 0, std::nullopt};
    const std::size_t end =
        std::min(frame_.row_ranks.size(), top_ + static_cast<std::size_t>(std::max(1, rows_visible_)));
    for (std::size_t i = top_; i < end; ++i) {
        const int rank = frame_.row_ranks[i];
        const auto series = reader.module_series({kind_, op_, rank, frame_.rows, window});
        std::vector<const std::vector<StepValue>*> parts;
        for (const auto& s : series) parts.push_back(&s);
        const auto folded = fold_micro_steps(parts, op_);
        frame_.values.push_back(step_cells(folded, frame_.lo, frame_.hi, false, kHistory));
        if (frame_.by_baseline) {
            const auto base_series = shared_.baseline->module_series({kind_, op_, rank, frame_.rows, window});
            std::vector<const std::vector<StepValue>*> base_parts;
            for (const auto& s : base_series) base_parts.push_back(&s);
            frame_.levels.push_back(baseline_cells(folded, fold_micro_steps(base_parts, op_), frame_.lo, frame_.hi));
        } else {
            frame_.levels.push_back(step_cells(folded, frame_.lo, frame_.hi, true, kHistory));
        }
        frame_.value_winner.emplace_back(frame_.values.back().size(), 0);
        frame_.level_winner.emplace_back(frame_.levels.back().size(), 0);
        std::vector<std::uint8_t> marks(frame_.values.back().size(), 0);
        for (std::size_t c = 0; c < marks.size(); ++c) {
            const std::int64_t step = frame_.lo + static_cast<std::int64_t>(c);
            marks[c] = frame_.incident_cells.is_origin(rank, step, tensor_) ? 2
                       : frame_.incident_cells.has(rank, step, tensor_)     ? 1
                                                                            : 0;
        }
        frame_.marks.push_back(std::move(marks));
        frame_.labels.push_back("rank " + std::to_string(rank));
    }
}

// After a switch or a jump: the row holding the cell.
void LayersView::apply_go_to() {
    if (fixed_ == Fixed::tensor) {
        if (!go_to_) return;
        const auto at = std::find(frame_.row_ranks.begin(), frame_.row_ranks.end(), go_to_->rank);
        if (at != frame_.row_ranks.end()) selected_ = static_cast<std::size_t>(at - frame_.row_ranks.begin());
        return;
    }
    if (go_to_ && !go_to_->name.empty())
        for (std::size_t g = 0; g < frame_.grid.size(); ++g)
            for (const auto& tensor : frame_.grid[g].tensors)
                if (frame_.rows[tensor.front()].name == go_to_->name) {
                    selected_ = g;
                    return;
                }
}

std::size_t LayersView::cursor_column() const {
    if (frame_.fixed == Fixed::step) {
        const auto at = std::find(frame_.column_ranks.begin(), frame_.column_ranks.end(), rank_);
        return static_cast<std::size_t>(at - frame_.column_ranks.begin());
    }
    const std::int64_t step = cursor_step_.value_or(frame_.hi);
    // Left of what was read (a key moved it before the next read): no cell.
    return step < frame_.lo ? std::numeric_limits<std::size_t>::max() : static_cast<std::size_t>(step - frame_.lo);
}

std::optional<LayersView::Target> LayersView::target(std::size_t row, std::size_t column) const {
    if (row >= frame_.values.size() || column >= frame_.values[row].size()) return std::nullopt;
    Target t;
    if (frame_.fixed == Fixed::tensor) {
        t.rank = frame_.row_ranks[frame_.top + row];
        t.step = frame_.lo + static_cast<std::int64_t>(column);
        t.name = frame_.tensor;
        return t;
    }
    const GridRow& g = frame_.grid[frame_.top + row];
    const int w = (relative_ ? frame_.level_winner : frame_.value_winner)[row][column];
    t.name = frame_.rows[g.tensors[static_cast<std::size_t>(std::max(0, w))].front()].name;
    t.rank = frame_.fixed == Fixed::step ? frame_.column_ranks[column] : frame_.rank;
    t.step = frame_.fixed == Fixed::step ? frame_.lo : frame_.lo + static_cast<std::int64_t>(column);
    return t;
}

}  // namespace msmon::tui
