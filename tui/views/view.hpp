// A screen of msmon-tui: collect() reads its model through the Reader (the only data access), draw() turns the
// model into cells with no I/O, and its key table handles keys.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "store/reader.hpp"
#include "tui/command_table.hpp"
#include "tui/key_table.hpp"
#include "tui/models/overview_model.hpp"
#include "tui/screen_buffer.hpp"
#include "tui/widgets/line_editor.hpp"

namespace msmon::tui {

// The chart opened on one thing another view points at (an anomaly): its statistic and rank. It belongs to the
// chart alone and ends when the chart is left, so the Overview's statistic, filter and selection stay as they were.
struct ChartDrill {
    SeriesSelection series;
    int rank = -1;
    std::vector<std::int64_t> anomaly_steps;  // steps n/N jump between
    // A copy that departed from its replicas (ReplicaDivergence): the ranks that agree, charted as one line beside
    // the rank so that the read-out sets its value against theirs. Empty: none.
    std::vector<int> replicas;
};

// What the overview and the chart share: the statistic looked at, the filter, the rank in focus.
struct SharedSelection {
    SeriesSelection series;                  // the Overview's statistic and filter
    int focus_rank = -1;                     // the Overview's selected rank (a rank, not a row: sorting moves rows)
    std::optional<std::int64_t> focus_step;  // a step for the chart to centre its cursor on, once
    std::optional<ChartDrill> drill;         // while set, the chart shows this instead of the Overview's choice
    std::uint64_t drills = 0;                // drill-downs opened so far: a new one starts from a plain chart
    // Another run to compare with (--baseline, :baseline PATH): the Chart draws its same series faint, aligned by
    // step, and divides by it in its ratio view. Owned by the app; null: none.
    Reader* baseline = nullptr;
    std::string baseline_name;
    // While msmon-tui reads a backlog's history (core/ingest/backfill_plan.hpp): the steps not read yet. Charts
    // draw what has no value there as unread, not as a gap in the data. Set by the event loop; none: all read.
    std::optional<std::pair<std::int64_t, std::int64_t>> unread_steps;

    // What the chart shows: the drill-down's while there is one, else the Overview's.
    SeriesSelection& chart_series() { return drill ? drill->series : series; }
    int& chart_rank() { return drill ? drill->rank : focus_rank; }
};

class View {
public:
    virtual ~View() = default;
    virtual const char* title() const = 0;
    // The key table of the view's current mode (Config: the form, a value being typed, the review before saving).
    virtual const KeyTable& keys() const = 0;
    // The table the settings' `keys.<tab>:` lines rebind: the view's own (Config: its form's, whatever the mode).
    virtual KeyTable& own_keys() = 0;
    // The view's `:` commands, tried before the app's.
    virtual const CommandTable& commands() const {
        static const CommandTable none;
        return none;
    }
    // In a modal mode (typing a value, confirming a save) keys() takes every key; a key it does not bind is typed
    // into editor() when there is one, else ignored.
    virtual bool modal() const { return false; }
    // Esc: back one level inside the view (Health's run config page to its health page); false: the view is at its
    // top, and Esc goes back to the tab before.
    virtual bool back() { return false; }
    virtual LineEditor* editor() { return nullptr; }
    virtual void collect(Reader& reader) = 0;
    virtual void draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) = 0;
    // Row clicked with the mouse (relative to the view's area); default: nothing.
    virtual Reaction click(int /*x*/, int /*y*/) { return Reaction::none; }
    // The `/` filter, when this view filters by name itself; false: the app's series filter applies.
    virtual bool set_filter(const std::optional<std::string>& /*regex*/) { return false; }
    // Why `text` is not a filter this view takes (none: it is one); by default, a name pattern.
    virtual std::optional<std::string> check_filter(const std::string& text) const;
    // The view shows a file that changes without new data (the monitor config): collect() it every second.
    virtual bool watches_files() const { return false; }
    // After a frame: the data in hand was read for another size than the one just drawn (collect() again).
    virtual bool wants_reload() const { return false; }
};

// A tab whose view is not built yet says so, plainly.
class PlaceholderView final : public View {
public:
    PlaceholderView(const char* title, std::string message) : title_(title), message_(std::move(message)) {}
    const char* title() const override { return title_; }
    const KeyTable& keys() const override { return keys_; }
    KeyTable& own_keys() override { return keys_; }
    void collect(Reader&) override {}
    void draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs&) override {
        if (height > 1) buf.text(x + 2, y + 1, message_, {Color::dim, Color::none, kPlain}, width - 4);
    }

private:
    const char* title_;
    std::string message_;
    KeyTable keys_;
};

}  // namespace msmon::tui
