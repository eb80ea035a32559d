// msmon-tui's application: tabs of views, the status line, help, the filter and command lines. Input is data:
// each mode has one key table (the view's current mode, the filter and command lines, help, the keys valid
// everywhere) and the `:` commands are command tables; dispatch, the hint bar and the help overlay all read them.
// No terminal I/O here: tui/event_loop.cpp feeds keys in and puts composed frames on the terminal.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config/config_file.hpp"
#include "store/incident_index.hpp"
#include "store/reader.hpp"
#include "tui/command_table.hpp"
#include "tui/tab_table.hpp"
#include "tui/views/view.hpp"
#include "tui/widgets/line_editor.hpp"

namespace msmon::tui {

class OverviewView;

struct AppStatus {
    std::string source;  // the monitored folder
    std::string watch;   // inotify | polling | snapshot
    double values_per_second = 0;
    std::uint64_t values = 0;
    std::uint64_t malformed = 0;
    std::string notice;
    // Started before the job: what msmon waits for (the folder, or anything to read in it). Kept on the status
    // line before anything else but the message of the moment.
    std::string waiting;
    // A backlog's history still being read: how much is in (tui/models/backfill_text.hpp); empty once read.
    std::string history;
    double seconds_since_data = -1;  // since the ingest thread last committed; -1: nothing yet
};

class App {
public:
    // `config`: the monitor config the Config tab edits (an empty path: none given).
    explicit App(std::unique_ptr<Reader> reader, const ConfigTarget& config = {});
    ~App();

    SharedSelection& shared() { return shared_; }
    // Selects a tab by name (overview, chart, anomalies, health, config, experts, layers); false if there is none.
    bool select_view(const std::string& name);
    // Re-reads the models of the visible view.
    void collect();
    // Draws a whole frame: tabs, the view, the hint bar, the status line (and help or input when open).
    void compose(ScreenBuffer& buf, const Glyphs& glyphs);
    // Handles one key; returns false when the app should quit.
    bool handle_key(int key, int mouse_x, int mouse_y, bool& reload, bool& redraw);
    // The keys that quit in the app's state now (bound to "quit": q unless moved; none while typing). Asked before a
    // collect() runs on another thread, while no key can change that state.
    std::vector<int> quit_keys();
    AppStatus& status() { return status_; }
    // The run to compare with (null: none); `name` is what the Chart's legend and the title call it.
    void set_baseline(std::unique_ptr<Reader> baseline, const std::string& name);
    // What a baseline named in the TUI (":baseline PATH") may be opened through (--trust-db-folder).
    void set_store_access(const StoreAccess& access) { store_access_ = access; }
    // Moves key bindings as the settings ask ("chart:w" → "W"; "global:q" for the keys valid everywhere): one
    // message per refusal ("keys.chart:Q: no key 'Q' to move there").
    std::vector<std::string> override_keys(const std::vector<std::pair<std::string, std::string>>& overrides);
    // The Chart's x axis: "step", "wall" or "elapsed" (the settings' x_axis); anything else: steps.
    void set_x_axis(const std::string& mode);
    // The run's incidents as the last collect() read them (the event loop announces the new ones).
    const IncidentIndex& incidents() const { return incidents_; }
    // The visible view shows a file that changes without new data: collect() it every second.
    bool visible_view_watches_files() const { return view(current_).watches_files(); }
    // The frame just composed was drawn from data read for another size: collect() and compose again.
    bool visible_view_wants_reload() const { return view(current_).wants_reload(); }

    // For the key-table test: every mode's table as help lists it, and the command tables.
    struct Mode {
        std::string name;
        const KeyTable* keys;
    };
    // The tables a key goes through now, in order (the first that binds it runs it).
    std::vector<Mode> dispatch_chain();
    const CommandTable& commands() const { return commands_; }
    View& view(TabId id) const { return *tabs_[static_cast<std::size_t>(id)]; }
    // The help overlay's lines (key or command, what it does), as drawn: for the current mode.
    std::vector<std::pair<std::string, std::string>> help_lines();

private:
    enum class Input { none, filter, command };
    void draw_help(ScreenBuffer& buf, const Glyphs& glyphs);
    Reaction run_command_line(const std::string& line);
    // Every change of tab goes through here: it is remembered for Esc (back), and leaving the chart ends its
    // drill-down.
    void show(TabId tab);
    Reaction back();
    Reaction apply_filter(const std::string& text);
    const OverviewView& overview() const;
    // The rank typed, if the run has it; else `error` says what there is.
    std::optional<int> existing_rank(const std::string& text, std::string& error) const;
    // The key table for the current input mode (help, a line being typed, a modal view, or none: view + global).
    LineEditor* active_editor();

    std::unique_ptr<Reader> reader_;
    std::unique_ptr<Reader> baseline_;  // shared_.baseline points at it
    StoreAccess store_access_;
    SharedSelection shared_;
    IncidentIndex incidents_;  // the Overview's marks, the Anomalies tab's incidents, the status line's count
    std::vector<std::unique_ptr<View>> tabs_;  // indexed by TabId
    TabId current_ = TabId::overview;
    std::vector<TabId> back_;  // where Esc goes back to, most recent last
    KeyTable global_keys_, filter_keys_, command_keys_, help_keys_;
    CommandTable commands_;
    LineEditor filter_line_, command_line_;
    bool help_ = false, quit_ = false;
    int help_top_ = 0, help_rows_ = 1;  // the help overlay's scroll and its last height
    Input input_ = Input::none;
    std::string message_;  // the answer to the last command or filter typed ("no rank 77"), until the next key
    AppStatus status_;
};

}  // namespace msmon::tui
