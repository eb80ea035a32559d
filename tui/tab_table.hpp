// msmon-tui's tabs, one line each. The tab ids, their keys, the names `--snapshot VIEW` and the `keys.<tab>:`
// settings take, --help's list, the tab bar and its mouse hit test all read this table, and App makes each tab's
// view with the maker its line names. A new tab is its view (defining its maker) and its lines here.
#pragma once

#include <cstddef>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace msmon::tui {

enum class TabId { overview, chart, anomalies, health, config, experts, layers };

class View;
struct ViewDeps;
using ViewMaker = std::unique_ptr<View> (*)(ViewDeps& deps);

// Each view's maker, defined in its view's .cpp.
std::unique_ptr<View> make_overview_view(ViewDeps& deps);
std::unique_ptr<View> make_chart_view(ViewDeps& deps);
std::unique_ptr<View> make_anomalies_view(ViewDeps& deps);
std::unique_ptr<View> make_health_view(ViewDeps& deps);
std::unique_ptr<View> make_config_view(ViewDeps& deps);
std::unique_ptr<View> make_expert_load_view(ViewDeps& deps);
std::unique_ptr<View> make_layers_view(ViewDeps& deps);

struct TabEntry {
    TabId id;
    const char* name;  // lower case, as --snapshot and keys.<tab>: take it; the view's title is shown
    ViewMaker make;
};

// In the order they are shown.
inline constexpr TabEntry kTabs[] = {
    {TabId::overview, "overview", make_overview_view},    {TabId::chart, "chart", make_chart_view},
    {TabId::anomalies, "anomalies", make_anomalies_view}, {TabId::health, "health", make_health_view},
    {TabId::config, "config", make_config_view},          {TabId::experts, "experts", make_expert_load_view},
    {TabId::layers, "layers", make_layers_view},
};
inline constexpr std::size_t kTabCount = std::size(kTabs);

constexpr bool tabs_in_id_order() {
    for (std::size_t i = 0; i < kTabCount; ++i)
        if (static_cast<std::size_t>(kTabs[i].id) != i) return false;
    return true;
}
static_assert(tabs_in_id_order(), "kTabs lists every TabId once, in its order: App::view(id) indexes by it");

// The key that shows the tab at `index`: 1 to 9, then 0 for the tenth; none past it (Tab reaches those), so that no
// tab takes a key another binding has.
std::optional<int> tab_key(std::size_t index);
// The tab called `name` (its kTabs name), if any.
std::optional<TabId> tab_named(std::string_view name);
// "overview, chart, anomalies, health, config, experts, layers": for messages and --help.
std::string tab_names();
// The tab bar's label of the tab at `index`: " 1 Overview " (no number for a tab without a key).
std::string tab_label(std::size_t index, std::string_view title);

}  // namespace msmon::tui
