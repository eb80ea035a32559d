// What the Layers view draws, computed from what it read: the rows it lists (a tensor's micro-steps folded into
// one row unless asked for, a folded layer as one row, the `/` filter applied) and each row's cells (a value
// against the row's own recent history, or the value). No I/O: the view reads, this arranges.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "store/incident_index.hpp"
#include "store/reader.hpp"
#include "tui/models/module_filter.hpp"
#include "tui/widgets/downsample.hpp"

namespace msmon::tui {

// One listed row: one tensor (all its micro-steps, or one of them when they are shown apart), or a folded layer.
struct GridRow {
    std::string label;
    std::optional<int> layer;
    bool folded_layer = false;
    // The tensors in the row, each as the module rows (indices) of its micro-steps.
    std::vector<std::vector<std::size_t>> tensors;
};

struct GridRowOptions {
    bool micro_steps_apart = false;
    std::set<int> folded_layers;
    const ModuleFilter* filter = nullptr;
};

std::vector<GridRow> grid_rows(const std::vector<ModuleRow>& rows, const GridRowOptions& options);

// One tensor's series from its micro-steps' series: a step's values combined by the op's rule (norm: root sum
// of squares; max, min; nans: the sum; else the mean). One part: itself.
std::vector<StepValue> fold_micro_steps(const std::vector<const std::vector<StepValue>*>& parts, std::string_view op);

// One cell a step over [lo, hi]: relative, log10(|value| / the median of the tensor's previous `history`
// finite values); else the value. Non-finite values keep their flags.
std::vector<ColumnStat> step_cells(const std::vector<StepValue>& series, std::int64_t lo, std::int64_t hi,
                                   bool relative, std::size_t history);

// One cell a step over [lo, hi] against a baseline run's same series: log10(|value| / |baseline's value at that
// step|); a step the baseline lacks (or holds 0 or a non-finite value at) has no cell, a non-finite value keeps
// its flags.
std::vector<ColumnStat> baseline_cells(const std::vector<StepValue>& series, const std::vector<StepValue>& baseline,
                                       std::int64_t lo, std::int64_t hi);

// Several tensors' cells as one row (a folded layer): a column shows its most extreme member (relative: the
// largest |level|; by value: the largest), a non-finite one first. `winner` gets, per column, the member shown
// (-1: none has a value).
std::vector<ColumnStat> fold_cells(const std::vector<std::vector<ColumnStat>>& members, bool relative,
                                   std::vector<int>* winner = nullptr);

// Where the detectors' incidents touch the view's kind: (rank, step, tensor name) of every member scored at least
// IncidentIndex::kMarkScore, and where the most severe incident began.
struct IncidentCells {
    using Cell = std::tuple<int, std::int64_t, std::string>;
    std::set<Cell> members;
    std::optional<Cell> origin;
    bool has(int rank, std::int64_t step, const std::string& name) const {
        return members.count({rank, step, name}) > 0;
    }
    bool is_origin(int rank, std::int64_t step, const std::string& name) const {
        return origin && *origin == Cell{rank, step, name};
    }
};
IncidentCells incident_cells(const IncidentSet& set, const std::string& kind);

}  // namespace msmon::tui
