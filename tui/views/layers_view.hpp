// Layers (issue 20): one rank's tensors of one kind as rows in forward order, steps across, each cell coloured by
// its value against its own row's recent median (or by value, log scale); the selected row's tensor charts on
// Enter. The first view of the module dimension: which layer went bad first, on this rank.
#pragma once

#include <functional>

#include "tui/models/incident_index.hpp"
#include "tui/views/view.hpp"

namespace msmon::tui {

class LayersView final : public View {
public:
    // Shows the rank where the most severe incident began (else the Overview's rank) until r/R choose one.
    LayersView(SharedSelection& shared, IncidentIndex& incidents, std::function<void()> open_chart);
    const char* title() const override { return "Layers"; }
    const KeyTable& keys() const override { return keys_; }
    void collect(Reader& reader) override;
    void draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) override;
    bool wants_reload() const override { return stale_; }

private:
    Reaction move(int delta);
    Reaction cycle_kind(int delta);
    Reaction cycle_op();
    Reaction next_rank(int delta);
    Reaction chart();

    SharedSelection& shared_;
    IncidentIndex& incidents_;
    std::function<void()> open_chart_;
    bool rank_chosen_ = false;  // by r/R: from then on the view stays on it
    KeyTable keys_;
    StoreCatalog catalog_;
    std::string kind_, op_;
    int rank_ = -1;
    std::vector<ModuleRow> rows_;
    std::vector<std::vector<StepValue>> series_;  // of rows_[top_ ..], as many as were visible when read
    std::size_t selected_ = 0, top_ = 0;
    int rows_visible_ = 20, map_width_ = 80;  // as last drawn: what collect reads for
    int read_rows_ = 0, read_width_ = 0;      // what the series were read for
    std::size_t read_top_ = 0;
    std::int64_t lo_ = 0, hi_ = -1;
    bool relative_ = true;
    bool stale_ = false;
};

}  // namespace msmon::tui
