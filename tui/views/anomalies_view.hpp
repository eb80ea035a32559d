// Anomalies: msprobe's dumps and msmon's detections in one table — sort by any column or msprobe's first-anomaly
// order, filter, group repeats; a detail pane with the message, the module's structure and code stack; Enter
// drills into the chart at that step.
#pragma once

#include <functional>

#include "tui/models/anomaly_table.hpp"
#include "tui/views/view.hpp"

namespace msmon::tui {

class AnomaliesView final : public View {
public:
    AnomaliesView(SharedSelection& shared, std::function<void()> open_chart);
    const char* title() const override { return "Anomalies"; }
    const KeyTable& keys() const override { return keys_; }
    void collect(Reader& reader) override;
    void draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) override;
    Reaction click(int x, int y) override;
    bool set_filter(const std::optional<std::string>& regex) override;
    bool command(const std::string& verb, const std::string& arg, std::string& error) override;

    // For benchmarks and tests: the list, the table options, rebuilding rows (not when the store pages the view).
    void set_list(std::vector<AnomalyRecord> list);
    AnomalyTableOptions& options() { return options_; }
    void rebuild();
    const std::vector<AnomalyRow>& rows() const { return rows_; }

private:
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
    std::function<void()> open_chart_;
    KeyTable keys_;
    std::vector<AnomalyRecord> list_;
    std::vector<AnomalyRow> rows_;
    AnomalyTableOptions options_;
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
