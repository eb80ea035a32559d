// The tab table: every tab has a name and a key that collides with nothing, past the ninth too.
#include "tui/tab_table.hpp"

#include <gtest/gtest.h>

#include <set>

namespace msmon::tui {
namespace {

TEST(TabTable, the_first_nine_tabs_take_1_to_9_the_tenth_0_and_later_ones_none) {
    EXPECT_EQ(tab_key(0), '1');
    EXPECT_EQ(tab_key(8), '9');
    EXPECT_EQ(tab_key(9), '0') << "a tenth tab took ':' ('1' + 9)";
    EXPECT_EQ(tab_key(10), std::nullopt);
    std::set<int> keys;
    for (std::size_t i = 0; i < 12; ++i) {
        if (const auto k = tab_key(i)) {
            EXPECT_TRUE(keys.insert(*k).second) << "key " << char(*k) << " twice";
        }
    }
}

TEST(TabTable, names_find_their_tabs_and_are_listed_in_order) {
    for (const TabEntry& t : kTabs) EXPECT_EQ(tab_named(t.name), t.id) << t.name;
    EXPECT_EQ(tab_named("Overview"), std::nullopt) << "names are lower case, as --snapshot takes them";
    EXPECT_EQ(tab_named("global"), std::nullopt);
    // Listed in the table's order, comma-separated (a tab added at the end adds ", <name>").
    const std::string names = tab_names();
    EXPECT_TRUE(names.starts_with("overview, chart, anomalies, health, config, experts, layers")) << names;
    std::size_t at = 0;
    for (const TabEntry& t : kTabs) {
        const std::string want = (at == 0 ? "" : ", ") + std::string(t.name);
        EXPECT_EQ(names.compare(at, want.size(), want), 0) << names << " at " << at << ": " << t.name;
        at += want.size();
    }
    EXPECT_EQ(at, names.size()) << names;
}

TEST(TabTable, the_tab_bar_label_shows_the_key_when_there_is_one) {
    EXPECT_EQ(tab_label(0, "Overview"), " 1 Overview ");
    EXPECT_EQ(tab_label(9, "Tenth"), " 0 Tenth ");
    EXPECT_EQ(tab_label(10, "Eleventh"), " Eleventh ");
}

}  // namespace
}  // namespace msmon::tui
