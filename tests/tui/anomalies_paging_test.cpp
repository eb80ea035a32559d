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
    tui::AnomaliesView view(shared, [] {});
    view.collect(*reader);
    selected_line(view);  // sets the page height
    const std::size_t first_read = view.rows().size();
    EXPECT_LT(first_read, 1000u) << "the default view read every group";
    // The same table held whole in memory (set_list), moved by the same keys, must show the same rows.
    tui::AnomaliesView whole(shared, [] {});
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

}  // namespace
}  // namespace msmon::test
