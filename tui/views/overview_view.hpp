// Overview: one row per rank — sparkline of the chosen statistic, latest, min, max, a mark (`!`) on a rank in an
// incident and on the steps of its anomalies there; a heatmap (ranks × steps) when ranks outnumber rows.
#pragma once

#include <functional>
#include <map>

#include "store/incident_index.hpp"
#include "tui/models/rank_layout.hpp"
#include "tui/views/view.hpp"
#include "tui/widgets/downsample.hpp"

namespace msmon::tui {

class OverviewView final : public View {
public:
    enum class Sort { rank, latest, deviation, baseline };
    OverviewView(SharedSelection& shared, IncidentIndex& incidents, std::function<void()> open_chart);
    const char* title() const override { return "Overview"; }
    const KeyTable& keys() const override { return keys_; }
    KeyTable& own_keys() override { return keys_; }
    void collect(Reader& reader) override;
    void draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) override;
    Reaction click(int x, int y) override;

    const OverviewModel& model() const { return model_; }
    // For benchmarks and tests: draw a model that did not come from a store.
    void set_model(OverviewModel model) { model_ = std::move(model); }

private:
    std::vector<std::size_t> sorted_rows() const;
    // Each rank's distance from the baseline (shared_.baseline), for the baseline sort.
    void collect_baseline();
    // Where the selected rank (shared_.focus_rank) is in `order` (sorted_rows()); 0 if it has no row.
    std::size_t selected_position(const std::vector<std::size_t>& order) const;
    Reaction move(int delta);
    Reaction cycle_kind(int delta);
    Reaction cycle_op();

    // The heatmap (tui/views/overview_heatmap.cpp): the latest steps, one column each; panned back to end at
    // heat_end_; or the whole run on the map's width (each column the max of its steps).
    enum class HeatSpan { latest, panned, whole };
    struct HeatWindow {
        std::int64_t lo = 0, hi = -1;
        int columns = 0;
    };
    HeatWindow heat_window() const;
    Reaction pan_heatmap(int direction);
    Reaction toggle_whole_run();
    void collect_heatmap(Reader& reader);
    void draw_heatmap_view(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs,
                           const std::vector<std::size_t>& order);

    SharedSelection& shared_;
    IncidentIndex& incidents_;
    std::function<void()> open_chart_;
    OverviewModel model_;
    RankLayout stage_layout_;  // pipeline stages: rows are grouped by stage, deviation is from the stage's median
    KeyTable keys_;
    Sort sort_ = Sort::rank;
    SeriesSelection defaulted_;     // the default statistic as last read (default_selection)
    bool showing_default_ = false;  // the user has not picked one: the title says "default"
    // With a baseline: each rank's ratio farthest from 1 over the window, by rank (|log|: a halving is as far as a
    // doubling), and the summary for the selected rank's line.
    std::map<int, double> baseline_distance_;
    std::map<int, std::string> baseline_summary_;
    enum class Layout { automatic, list, heatmap };  // automatic: the heatmap when ranks outnumber rows
    Layout layout_ = Layout::automatic;
    bool log_scale_ = false;
    HeatSpan heat_span_ = HeatSpan::latest;
    std::int64_t heat_end_ = 0;            // the last step shown, when panned
    int heat_width_ = 0;                   // the map's columns at the last frame: what collect reads for
    std::vector<RankSeries> heat_series_;  // panned or whole run: read for the window, by rank
    std::size_t top_ = 0;
    int rows_visible_ = 1, list_y_ = 0;
    bool heatmap_shown_ = false;
    std::vector<std::vector<ColumnStat>> heat_rows_;  // per-frame scratch, kept to avoid reallocating
    std::vector<SeriesPoint> scratch_;
    std::vector<ColumnStat> row_cols_;
};

}  // namespace msmon::tui
