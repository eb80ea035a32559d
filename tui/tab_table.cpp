// The tab table's lookups (see the header).
#include "tui/tab_table.hpp"

namespace msmon::tui {

static_assert(kTabCount > 0);

std::optional<int> tab_key(std::size_t index) {
    if (index < 9) return '1' + static_cast<int>(index);
    if (index == 9) return '0';
    return std::nullopt;
}

std::optional<TabId> tab_named(std::string_view name) {
    for (const TabEntry& t : kTabs)
        if (name == t.name) return t.id;
    return std::nullopt;
}

std::string tab_names() {
    std::string out;
    for (const TabEntry& t : kTabs) out += (out.empty() ? "" : ", ") + std::string(t.name);
    return out;
}

std::string tab_label(std::size_t index, std::string_view title) {
    const std::optional<int> key = tab_key(index);
    return " " + (key ? std::string(1, static_cast<char>(*key)) + " " : std::string()) + std::string(title) + " ";
}

}  // namespace msmon::tui
