// Layers: the module dimension. msprobe's data is a cube, step x rank x tensor; this view fixes one of
// the three and shows the other two as a heatmap: one rank (tensors x steps, the default), one step (tensors x
// ranks) or one tensor (ranks x steps). Tensors are listed in forward order, a tensor's micro-steps folded into
// its step, layers foldable, filtered by `/` (names and labels). Each cell is coloured by its value against its
// own recent history (or by value); NaN/Inf and the detectors' incidents carry marks. A cursor moves over cells;
// Enter charts the cell's tensor at its step on its rank. Which layer went bad first, on which rank.
//
// layers_view.cpp: keys and moves; layers_view_collect.cpp: what is read; layers_view_draw.cpp: the frame.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>

#include "store/incident_index.hpp"
#include "tui/models/layer_grid.hpp"
#include "tui/models/module_filter.hpp"
#include "tui/models/pipeline_stages.hpp"
#include "tui/models/rank_layout.hpp"
#include "tui/views/view.hpp"

namespace msmon::tui {

class LayersView final : public View {
public:
    enum class Fixed { rank, step, tensor };

    // Follows the cell where the most severe incident began (else the Overview's rank, at the latest step) until
    // a key moves the cursor or chooses a rank.
    LayersView(SharedSelection& shared, IncidentIndex& incidents, std::function<void()> open_chart);
    const char* title() const override { return "Layers"; }
    const KeyTable& keys() const override { return keys_; }
    KeyTable& own_keys() override { return keys_; }
    void collect(Reader& reader) override;
    void draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) override;
    bool wants_reload() const override { return stale_; }
    bool set_filter(const std::optional<std::string>& text) override;
    std::optional<std::string> check_filter(const std::string& text) const override;

private:
    // Where a shown cell is in the cube.
    struct Target {
        int rank = -1;
        std::int64_t step = 0;
        std::string name;
    };

    // A cell to put the cursor on once its rows are read: after a switch of the fixed dimension, or the top
    // incident's origin. No step: the latest, followed.
    struct GoTo {
        int rank = -1;
        std::optional<std::int64_t> step;
        std::string name;
    };

    // Keys (layers_view.cpp).
    Reaction move_row(long delta);
    Reaction move_column(long delta);
    Reaction move_step(long delta);
    Reaction cycle_kind(int delta);
    Reaction cycle_op();
    Reaction next_rank(int delta);
    Reaction switch_fixed();
    Reaction toggle_fold();
    Reaction fold_all();
    Reaction go_to_origin();
    Reaction chart();
    Reaction user_moved(Reaction r);
    // The rows are about to change (micro-steps apart, a filter, a fold): the selected tensor stays selected.
    void keep_selected_tensor();

    // Reading (layers_view_collect.cpp).
    void choose_kind_and_op();
    void follow_incident();
    void read_grid(Reader& reader);
    void read_tensor_rows(Reader& reader);
    std::vector<ModuleRow> rows_of(Reader& reader, int rank);
    void place_window();
    void keep_selection_visible();
    std::size_t row_count() const;
    std::size_t cursor_column() const;
    // The cell at a shown row (from top_) and column: its rank, step and tensor.
    std::optional<Target> target(std::size_t row, std::size_t column) const;
    // The cell under the cursor, as read.
    std::optional<Target> cursor_target() const;
    void apply_go_to();

    // Drawing (layers_view_draw.cpp).
    std::string title_line() const;
    // The cursor's read-out in `width` columns: the tensor's name gives way first.
    std::string cursor_line(int width, bool unicode) const;
    void draw_column_axis(ScreenBuffer& buf, int x, int y, int width, const Style& style) const;

    SharedSelection& shared_;
    IncidentIndex& incidents_;
    std::function<void()> open_chart_;
    KeyTable keys_;

    // What the person chose.
    Fixed fixed_ = Fixed::rank;
    std::string kind_, op_;
    int rank_ = -1;                            // the rank in focus: fixed, the cursor's column, or the selected row
    std::optional<std::int64_t> cursor_step_;  // none: the latest step, followed
    std::string tensor_;                       // fixed in Fixed::tensor (a tensor's name)
    std::optional<ModuleFilter> filter_;
    bool micro_steps_apart_ = false;
    std::set<int> folded_layers_;
    bool relative_ = true;
    bool by_baseline_ = false;  // colour against the baseline run (SharedSelection::baseline), not the history
    bool following_ = true;     // the cursor follows the top incident's origin until a key moves it
    std::optional<GoTo> go_to_;
    std::size_t selected_ = 0, top_ = 0;  // rows
    std::int64_t placed_at_max_ = -1;     // the newest step when the window was last placed

    // What collect() read, and for what: drawing and the cell under the cursor go by this alone, so a key
    // pressed before the next collect() never pairs new choices with old data.
    struct Frame {
        Fixed fixed = Fixed::rank;
        std::string kind, op, tensor;
        int rank = -1;
        std::size_t top = 0;
        int rows_visible = 0, width = 0;
        std::vector<ModuleRow> rows;     // Fixed::rank, ::step: the module rows; ::tensor: the tensor's micro rows
        std::vector<GridRow> grid;       // Fixed::rank, ::step: the rows listed
        std::vector<int> row_ranks;      // Fixed::tensor: the ranks listed
        std::vector<int> column_ranks;   // Fixed::step: the ranks across (a page of ordered_ranks)
        std::vector<int> ordered_ranks;  // Fixed::step: every rank, stage by stage
        std::int64_t lo = 0, hi = -1;    // steps across (Fixed::rank, ::tensor); Fixed::step: the step, lo == hi
        // Per shown row (from top), per column: by value, against the row's own history, which tensor of a folded
        // row is shown, and the marks (0 none, 1 in an incident, 2 where the top incident began).
        std::vector<std::vector<ColumnStat>> values, levels;
        std::vector<std::vector<int>> value_winner, level_winner;
        std::vector<std::vector<std::uint8_t>> marks;
        std::vector<std::string> labels;  // of the shown rows
        std::string stages;               // "2 pipeline stages: r0-r3 layers 0-1, r4-r7 layers 2-3", or empty
        bool by_baseline = false;         // levels are against the baseline run, not the cell's history
        IncidentCells incident_cells;
    };
    StoreCatalog catalog_;
    Frame frame_;
    RankLayout layout_;  // every rank's rows of the kind and their pipeline stages

    // Sizes as last drawn: what collect() reads for.
    int rows_visible_ = 20, map_width_ = 80, cell_width_ = 1;
    bool stale_ = false;
};

}  // namespace msmon::tui
