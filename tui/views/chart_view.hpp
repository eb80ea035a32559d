// Chart: the shared statistic (or a drill-down's) for the focused rank, other ranks faint for comparison, or a
// min-median-max band across every rank; or the tensors the filter matches side by side on the focused rank;
// zoom, pan, log-y, a robust y range, smoothing (debiased EMA, raw line faint), a cursor reading out step and
// values.
#pragma once

#include "tui/models/time_axis.hpp"
#include "tui/views/view.hpp"
#include "tui/widgets/braille_chart.hpp"

namespace msmon::tui {

class ChartView final : public View {
public:
    explicit ChartView(SharedSelection& shared);
    const char* title() const override { return "Chart"; }
    const KeyTable& keys() const override { return keys_; }
    KeyTable& own_keys() override { return keys_; }
    void collect(Reader& reader) override;
    void draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) override;

    // Zoomed step range now shown (for tests and the status line).
    std::pair<std::int64_t, std::int64_t> visible_steps() const { return {lo_, hi_}; }
    void set_x_axis(XAxis mode) { x_axis_ = mode; }
    bool wants_reload() const override { return reduced_ && plot_columns_ > 0 && plot_columns_ != read_columns_; }

private:
    Reaction zoom(double factor);
    Reaction pan(double fraction);
    Reaction next_rank(int delta);
    Reaction jump_anomaly(int delta);
    void read(Reader& reader, bool window_is_zoom);
    // The focused rank's stretches a restart abandoned (steps an earlier run trained, then a later one again).
    void read_abandoned(Reader& reader);
    // The baseline's same series on the focused rank (SharedSelection::baseline).
    void read_baseline();
    // A drill-down on a departed copy: its replicas' line beside it (named in `what`, the title's).
    void add_replicas(std::vector<ChartSeries>& lines, std::string& what) const;
    // Lines by tensor: the page of tensors the filter matches on the focused rank, micro-steps folded.
    void read_tensors(Reader& reader, bool window_is_zoom);
    Reaction page_tensors(int delta);
    SeriesWindow window(bool window_is_zoom) const;
    // The lines and the range on the time axis (x_axis_ not steps): positions, tick labels, the cursor's time,
    // the clipped pauses marked and named in the title.
    void place_in_time(std::vector<ChartSeries>& lines, ChartOptions& opt, bool unicode) const;
    // After the range or cursor moved: reread when the data in hand was reduced for the old one.
    Reaction moved() const;

    static constexpr int kColumnsBeforeFirstFrame = 400;  // pixel columns of a 200-cell-wide plot

    SharedSelection& shared_;
    KeyTable keys_;
    std::vector<RankSeries> series_;
    struct Abandoned {
        std::int64_t from = 0, to = 0;  // the steps trained again
        std::vector<StepValue> points;
    };
    std::vector<Abandoned> abandoned_;  // the focused rank's, oldest first
    std::vector<StepValue> baseline_;   // the baseline's same series on the focused rank (every step when ratio_)
    bool ratio_ = false;                // the focused rank divided by the baseline
    XAxis x_axis_ = XAxis::step;        // w: steps, the wall clock, the time since the first step
    TimeAxis time_axis_;                // read when x_axis_ is not steps
    std::int64_t data_lo_ = 0, data_hi_ = -1;
    std::int64_t lo_ = 0, hi_ = -1;
    bool zoomed_ = false, log_y_ = false, others_ = true;
    bool drilled_ = false;           // the last collect() was for a drill-down
    int smoothing_ = 0;              // index into kSmoothing
    std::uint64_t drills_seen_ = 0;  // SharedSelection::drills when last collected
    std::optional<std::int64_t> cursor_;
    int plot_columns_ = 0;  // of the last frame's plot
    bool reduced_ = false;  // series_ holds only what draws on read_columns_
    int read_columns_ = 0;
    bool tensors_ = false, band_ = false, robust_y_ = false;
    static constexpr std::size_t kTensorsPerPage = 6;
    std::size_t tensor_page_ = 0, tensors_matched_ = 0;
    std::vector<std::pair<std::string, std::vector<StepValue>>> tensor_series_;  // the page's, by name
};

}  // namespace msmon::tui
