// msmon-tui's application: tabs of views, the status line, help, filter and command input, and the loop
// that sleeps in poll() on the keyboard and the ingest thread's "data changed" wake-up.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "store/reader.hpp"
#include "tui/models/incident_index.hpp"
#include "tui/views/view.hpp"

namespace msmon::tui {

class OverviewView;

struct AppStatus {
    std::string source;  // the monitored folder
    std::string watch;   // inotify | polling | snapshot
    double values_per_second = 0;
    std::uint64_t values = 0;
    std::uint64_t malformed = 0;
    std::string notice;
    double seconds_since_data = -1;  // since the ingest thread last committed; -1: nothing yet
};

class App {
public:
    // `config_path`: the monitor config the Config tab edits (empty: none given).
    explicit App(std::unique_ptr<Reader> reader, const std::string& config_path = "");
    ~App();

    // Selects a tab by name (overview, chart, anomalies, health, config, experts); false if there is none.
    bool select_view(const std::string& name);
    // Re-reads the models of the visible view.
    void collect();
    // Draws a whole frame: tabs, the view, the hint bar, the status line (and help or input when open).
    void compose(ScreenBuffer& buf, const Glyphs& glyphs);
    // Handles one key; returns false when the app should quit.
    bool handle_key(int key, int mouse_x, int mouse_y, bool& reload, bool& redraw);
    AppStatus& status() { return status_; }
    // The visible view shows a file that changes without new data: collect() it every second.
    bool visible_view_watches_files() const { return views_[current_]->watches_files(); }
    // The frame just composed was drawn from data read for another size: collect() and compose again.
    bool visible_view_wants_reload() const { return views_[current_]->wants_reload(); }

private:
    void draw_help(ScreenBuffer& buf, const Glyphs& glyphs);
    Reaction run_command(const std::string& command);
    // Every change of tab: leaving the chart ends its drill-down; entering it remembers where Esc goes back to.
    void show(std::size_t view);
    const OverviewView& overview() const;
    // The rank typed, if the run has it; else `error` says what there is.
    std::optional<int> existing_rank(const std::string& text, std::string& error) const;

    std::unique_ptr<Reader> reader_;
    SharedSelection shared_;
    IncidentIndex incidents_;  // the Overview's marks, the Anomalies tab's incidents, the status line's count
    std::vector<std::unique_ptr<View>> views_;
    std::size_t current_ = 0;
    std::size_t return_to_ = 0;  // where Esc in the chart goes back to
    KeyTable global_keys_;
    bool help_ = false, quit_ = false;
    enum class Input { none, filter, command } input_ = Input::none;
    std::string input_text_;
    std::string message_;  // the answer to the last command or filter typed ("no rank 77"), until the next key
    AppStatus status_;
};

}  // namespace msmon::tui
