// Chart: the shared statistic for the focused rank, other ranks faint for comparison; zoom, pan, log-y,
// smoothing (debiased EMA, raw line faint), a cursor reading out step and values.
#pragma once

#include "tui/views/view.hpp"
#include "tui/widgets/braille_chart.hpp"

namespace msmon::tui {

class ChartView final : public View {
public:
    explicit ChartView(SharedSelection& shared);
    const char* title() const override { return "Chart"; }
    const KeyTable& keys() const override { return keys_; }
    void collect(Reader& reader) override;
    void draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) override;

    // Zoomed step range now shown (for tests and the status line).
    std::pair<std::int64_t, std::int64_t> visible_steps() const { return {lo_, hi_}; }

private:
    Reaction zoom(double factor);
    Reaction pan(double fraction);
    Reaction next_rank(int delta);
    Reaction jump_anomaly(int delta);

    SharedSelection& shared_;
    KeyTable keys_;
    std::vector<RankSeries> series_;
    std::int64_t data_lo_ = 0, data_hi_ = -1;
    std::int64_t lo_ = 0, hi_ = -1;
    bool zoomed_ = false, log_y_ = false, others_ = true;
    int smoothing_ = 0;  // index into kSmoothing
    std::optional<std::int64_t> cursor_;
};

}  // namespace msmon::tui
