// Anomalies: incidents first — one row per incident, its origin's step, rank, kind, rule and module, expanding to
// its anomalies — or msprobe's dumps and msmon's detections in one table: sort by any column or msprobe's
// first-anomaly order, filter, group repeats. A detail pane with the message, the module's structure and code
// stack; Enter drills into the chart at that step (an incident's: its origin's).
#pragma once

#include <functional>
#include <set>

#include "store/incident_index.hpp"
#include "tui/models/anomaly_table.hpp"
#include "tui/views/view.hpp"

namespace msmon::tui {

class AnomaliesView final : public View {
public:
    AnomaliesView(SharedSelection& shared, IncidentIndex& incidents, std::function<void()> open_chart);
    const char* title() const override { return "Anomalies"; }
    const KeyTable& keys() const override { return keys_; }
    KeyTable& own_keys() override { return keys_; }
    void collect(Reader& reader) override;
    void draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) override;
    Reaction click(int x, int y) override;
    bool set_filter(const std::optional<std::string>& regex) override;
    const CommandTable& commands() const override { return commands_; }

    // For benchmarks and tests: the list, the table options, rebuilding rows (not when the store pages the view).
    // set_list() shows the table: a list given is not grouped into incidents.
    void set_list(std::vector<AnomalyRecord> list);
    AnomalyTableOptions& options() { return options_; }
    void rebuild();
    const std::vector<AnomalyRow>& rows() const { return rows_; }
    // Rows the view has in hand: incidents and expanded members, or the table's (paged: those read).
    std::size_t rows_in_hand() const { return incidents_shown() ? incident_rows_.size() : rows_.size(); }

private:
    // Incidents are the person's choice (i, s) and shown when the index could group the anomalies.
    bool incidents_shown() const { return incident_mode_ && incidents_.grouped(); }
    const std::vector<AnomalyRecord>& records() const {
        return incidents_shown() && shown_ ? shown_->anomalies : list_;
    }
    void rebuild_incidents_keeping(const std::string& key);
    // Incidents or the table; `keep_selection`: the anomaly selected is found again there (else: the first row).
    Reaction show_incidents(bool on, bool keep_selection);
    Reaction toggle_expanded();
    void select_carried();
    void read_detail();
    Reaction move(long delta);
    Reaction drill();
    template <typename T>
    Reaction toggle(std::optional<T>& slot, const T& value);
    const AnomalyRecord* selected() const;
    std::string selection_key() const;
    void rebuild_keeping(const std::string& key);
    void select_key(const std::string& key);
    // The default view (grouped, by rank score, no step filter) is ordered and paged by the store.
    bool pageable() const;
    // After an option changed: reload when the store pages the view, else rebuild here.
    Reaction changed(bool to_top);

    SharedSelection& shared_;
    IncidentIndex& incidents_;
    std::function<void()> open_chart_;
    KeyTable keys_;
    CommandTable commands_;
    std::vector<AnomalyRecord> list_;
    std::vector<AnomalyRow> rows_;
    AnomalyTableOptions options_;
    bool incident_mode_ = true;
    std::vector<IncidentRow> incident_rows_;
    std::set<std::string> expanded_;            // origins (anomaly_identity) of the incidents expanded
    std::optional<AnomalyRecord> carried_;      // selected before a switch between incidents and the table
    std::size_t incidents_listed_ = 0;          // incidents with a row (the filters pass one of their anomalies)
    std::shared_ptr<const IncidentSet> shown_;  // what incident_rows_ index into
    bool incident_rows_stale_ = true;           // the options changed since they were built
    std::size_t selected_ = 0, top_ = 0;
    bool paged_ = false;             // rows_ are the first rows of the store's order, list_ their faces
    bool forget_selection_ = false;  // the next collect() starts at the top
    std::size_t total_rows_ = 0, total_anomalies_ = 0;
    int rows_visible_ = 1, list_y_ = 0;
    Reader::ModuleInfo detail_;
    std::string detail_for_;
    Reader* reader_ = nullptr;  // for the detail pane's module lookup, done in collect()
};

}  // namespace msmon::tui
