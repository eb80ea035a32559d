// msmon-tui's tabs, one line each. The tab ids, their keys, the names `--snapshot VIEW` and the `keys.<tab>:`
// settings take, --help's list, the tab bar and its mouse hit test all read this table. A new tab is its view, one
// line here and its case in App's view factory (a switch over TabId: the compiler names a tab without a view).
#pragma once

#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

namespace msmon::tui {

enum class TabId { overview, chart, anomalies, health, config, experts, layers };

struct TabEntry {
    TabId id;
    const char* name;  // lower case, as --snapshot and keys.<tab>: take it; the view's title is shown
};

// In the order they are shown.
inline constexpr TabEntry kTabs[] = {
    {TabId::overview, "overview"}, {TabId::chart, "chart"},   {TabId::anomalies, "anomalies"},
    {TabId::health, "health"},     {TabId::config, "config"}, {TabId::experts, "experts"},
    {TabId::layers, "layers"},
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
