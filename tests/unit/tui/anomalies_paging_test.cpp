// The Anomalies view pages its default view from the store: scrolling past what was read asks for more, and
// every row it shows is the row the in-memory table (tui/models/anomaly_table) has at that position.
#include <gtest/gtest.h>

#include <sstream>

#include "store/reader.hpp"
#include "store/sqlite_ingest_store.hpp"
#include "tests/support/test_env.hpp"
#include "tui/models/anomaly_table.hpp"
#include "tui/screen_buffer.hpp"
#include "tui/views/anomalies_view.hpp"

namespace msmon::test {
namespace {

// 2,000 anomalies in 1,000 groups (rank × name × op), scores spread so the order is not the insertion order.
void fill(const std::string& db) {
    SqliteIngestStore store(db);
    RecordBatch b;
    for (int i = 0; i < 2000; ++i) {
        AnomalyRecord a;
        a.source = "detected";
        a.rule = "AnomalyTurbulence";
        a.rank = i % 10;
        a.step = i % 37;
        a.kind = "grad_reduced";
        a.name = "layers." + std::to_string((i / 10) % 50) + ".weight";
        a.op = i % 1000 < 500 ? "norm" : "max";
        a.tag_name = a.name + "/rank" + std::to_string(a.rank);
        a.key = std::to_string(i);
        a.message = "m";
        a.score = static_cast<double>((i * 7919) % 1000) / 10;
        b.anomalies.push_back(a);
    }
    store.commit(b);
}

tui::Reaction press(tui::AnomaliesView& view, int key) {
    tui::Reaction r = tui::Reaction::none;
    EXPECT_TRUE(tui::dispatch(view.keys(), key, r));
    return r;
}

// The selected line of a drawn frame (it starts with '>').
std::string selected_line(tui::AnomaliesView& view) {
    tui::ScreenBuffer buf(160, 30);
    view.draw(buf, 0, 0, 160, 30, tui::Glyphs{});
    std::istringstream in(buf.to_text());
    for (std::string l; std::getline(in, l);)
        if (!l.empty() && l[0] == '>') return l;
    return "";
}

TEST(AnomaliesPaging, scrolling_past_the_rows_read_reloads_and_every_row_matches_the_in_memory_table) {
    TempDir tmp;
    fill(tmp / "s.db");
    auto reader = open_sqlite_reader(tmp / "s.db");
    const auto list = reader->anomalies({});
    const auto model = tui::build_anomaly_rows(list, {});
    ASSERT_EQ(model.size(), 1000u);

    tui::SharedSelection shared;
    IncidentIndex incidents;
    tui::AnomaliesView view(shared, incidents, [] {});
    view.collect(*reader);
    // The tab opens on incidents; the table that the store pages is the sort after them (s), from its first row.
    ASSERT_EQ(press(view, 's'), tui::Reaction::reload);
    view.collect(*reader);
    selected_line(view);  // sets the page height
    const std::size_t first_read = view.rows().size();
    EXPECT_LT(first_read, 1000u) << "the default view read every group";
    // The same table held whole in memory (set_list), moved by the same keys, must show the same rows.
    tui::AnomaliesView whole(shared, incidents, [] {});
    whole.set_list(list);
    selected_line(whole);
    std::size_t reloads = 0, pages = 0;
    for (; pages < 60; ++pages) {
        if (press(view, tui::kKeyPageDown) == tui::Reaction::reload) {
            ++reloads;
            view.collect(*reader);
        }
        EXPECT_EQ(press(whole, tui::kKeyPageDown), tui::Reaction::redraw);
        const std::string line = selected_line(view);
        ASSERT_FALSE(line.empty());
        ASSERT_EQ(line, selected_line(whole)) << "after " << pages + 1 << " pages down";
    }
    for (int k = 0; k < 30; ++k) {
        press(view, tui::kKeyUp);
        press(whole, tui::kKeyUp);
        ASSERT_EQ(selected_line(view), selected_line(whole));
    }
    EXPECT_GT(reloads, 0u);
    EXPECT_NE(view.rows().size(), first_read);
}

// More anomalies than the incidents' limit: the tab does not read them all (which would freeze it at every new
// anomaly); it shows the ranked table the store pages, and says why. The count alone is read at each refresh.
TEST(AnomaliesPaging, past_the_incidents_limit_the_tab_shows_the_paged_ranked_table_and_says_why) {
    TempDir tmp;
    fill(tmp / "s.db");
    auto reader = open_sqlite_reader(tmp / "s.db");
    tui::SharedSelection shared;
    IncidentIndex incidents(1000);
    tui::AnomaliesView view(shared, incidents, [] {});
    view.collect(*reader);
    tui::ScreenBuffer buf(120, 30);
    view.draw(buf, 0, 0, 120, 30, tui::Glyphs{});
    std::istringstream in(buf.to_text());
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    ASSERT_GT(lines.size(), 3u);
    EXPECT_EQ(lines[0].rfind("sort rank  grouped  1000 rows of 2000", 0), 0u) << buf.to_text();
    EXPECT_EQ(lines[1].rfind("not grouped into incidents: 2000 anomalies, over 1000; every anomaly, ranked", 0), 0u)
        << buf.to_text();
    EXPECT_FALSE(incidents.grouped());
    EXPECT_LT(view.rows_in_hand(), 1000u) << "read every group: not the store's paging";
    EXPECT_EQ(selected_line(view), lines[3]);  // the first row
}

}  // namespace
}  // namespace msmon::test
