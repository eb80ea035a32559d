// What the overview shows, collected from a Reader: one statistic per rank over the latest steps, with the
// steps marked on that rank (where it is in an incident: tui/models/incident_index).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "store/reader.hpp"

namespace msmon::tui {

struct SeriesSelection {
    std::string kind;
    std::string op;
    std::optional<std::string> name_regex;
};

struct OverviewRow {
    int rank = 0;
    std::vector<StepValue> points;
    double latest = 0, min = 0, max = 0;
    std::set<std::int64_t> anomaly_steps;
    bool has_nan = false;
};

struct OverviewModel {
    StoreCatalog catalog;
    SeriesSelection selection;
    std::vector<OverviewRow> rows;
    std::int64_t step_lo = 0, step_hi = -1;
    std::size_t unhealthy_checkpoints = 0;
};

// What the Overview shows until the user picks (`[` `]`, `o`, :kind, :op), from what the store holds now, whatever
// order it arrived in: MindFormers' global norm, else its loss, else the reduced gradients' norm, else the
// unreduced ones', else any kind's norm, else the first statistic there is. Read again at each refresh, so a run
// followed from its first step opens as one opened afterwards once the same data is in.
SeriesSelection default_selection(const StoreCatalog& catalog);
// How one rank's value combines the statistic over the kind's tensors (Reader::rank_series), for the title:
// "L2 of the tensors' norms" for a norm; empty for a single-valued log kind ("value").
std::string across_tensors(const std::string& op);

// Reads the model. `window_steps` bounds how far back (0: all steps); `marks`: (rank, step) pairs to mark
// (IncidentIndex::marks), a row's `!` when it has any.
OverviewModel collect_overview(Reader& reader, const SeriesSelection& selection, std::int64_t window_steps,
                               const std::vector<std::pair<int, std::int64_t>>& marks);

}  // namespace msmon::tui
