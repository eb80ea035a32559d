// anomaly_group, kept by the writer, must give exactly the Anomalies table's default view as the in-memory model
// computes it from every anomaly (tui/models/anomaly_table): same rows, order, faces, counts and step ranges.
#include <gtest/gtest.h>

#include <random>

#include "store/reader.hpp"
#include "store/sqlite_ingest_store.hpp"
#include "tests/support/old_store.hpp"
#include "tests/support/test_env.hpp"
#include "tui/models/anomaly_table.hpp"

namespace msmon::test {
namespace {

const char* const kRules[] = {"AnomalyTurbulence", "AnomalyNan", "CrossRankOutlier"};

// Anomalies over 4 ranks × 30 steps, few names and ops so that groups, breadths and ties are common; scores
// include 0, negatives and repeats. Committed in 5 batches, each with a duplicate of an earlier anomaly.
void fill(const std::string& db, unsigned seed) {
    SqliteIngestStore store(db);
    std::mt19937 rng(seed);
    std::vector<AnomalyRecord> all;
    for (int c = 0; c < 5; ++c) {
        RecordBatch b;
        for (int i = 0; i < 300; ++i) {
            AnomalyRecord a;
            a.source = rng() % 3 ? "detected" : "msprobe";
            a.rule = kRules[rng() % 3];
            a.rank = static_cast<int>(rng() % 4);
            a.step = static_cast<std::int64_t>(rng() % 30);
            a.kind = rng() % 2 ? "grad_reduced" : "actv";
            a.name = "layers." + std::to_string(rng() % 5) + ".weight";
            a.op = rng() % 2 ? "norm" : "max";
            a.value = 1;
            a.tag_name = a.name + "/rank" + std::to_string(a.rank);
            a.message = "m";
            a.key = a.tag_name + "_step_" + std::to_string(a.step) + "_" + std::to_string(all.size());
            const int pick = static_cast<int>(rng() % 6);
            a.score = pick == 0 ? 0 : pick == 1 ? -3 : pick == 2 ? 40 : static_cast<double>(rng() % 1000) / 10;
            all.push_back(a);
            b.anomalies.push_back(a);
        }
        if (all.size() > 400) b.anomalies.push_back(all[all.size() / 3]);  // already stored: ignored
        store.commit(b);
    }
}

std::string face_key(const AnomalyRecord& a) {
    return a.key + "|" + a.source + "|" + a.rule;
}

void expect_page_equals_model(Reader& reader, const tui::AnomalyTableFilter& f) {
    const auto list = reader.anomalies({});
    tui::AnomalyTableOptions o;
    o.filter = f;
    const auto rows = tui::build_anomaly_rows(list, o);
    AnomalyGroupRequest req{f.source, f.rule, f.kind, f.rank, f.name_regex, 0, 100000};
    const auto page = reader.anomaly_groups(req);
    EXPECT_EQ(page.total_anomalies, static_cast<std::int64_t>(list.size()));
    EXPECT_EQ(page.total_groups, static_cast<std::int64_t>(rows.size()));
    ASSERT_EQ(page.groups.size(), rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& want = rows[i];
        const auto& got = page.groups[i];
        ASSERT_EQ(face_key(got.face), face_key(list[want.first])) << "row " << i;
        EXPECT_EQ(got.count, want.count) << "row " << i;
        EXPECT_EQ(got.first_step, want.first_step) << "row " << i;
        EXPECT_EQ(got.last_step, want.last_step) << "row " << i;
        EXPECT_DOUBLE_EQ(got.rank_score, want.rank_score) << "row " << i;
    }
    // Pages are slices of the same order.
    if (rows.size() > 25) {
        AnomalyGroupRequest second = req;
        second.offset = 10;
        second.limit = 15;
        const auto p2 = reader.anomaly_groups(second);
        ASSERT_EQ(p2.groups.size(), 15u);
        for (std::size_t i = 0; i < 15; ++i) EXPECT_EQ(face_key(p2.groups[i].face), face_key(page.groups[10 + i].face));
        EXPECT_EQ(p2.total_groups, page.total_groups);
    }
}

void expect_all_views(Reader& reader) {
    expect_page_equals_model(reader, {});
    tui::AnomalyTableFilter f;
    f.source = "msprobe";
    expect_page_equals_model(reader, f);
    f = {};
    f.rule = "AnomalyNan";
    f.rank = 2;
    expect_page_equals_model(reader, f);
    f = {};
    f.kind = "actv";
    f.name_regex = "layers\\.[13]";
    expect_page_equals_model(reader, f);
}

TEST(AnomalyGroups, stored_groups_equal_the_in_memory_table_in_order_faces_counts_and_filters) {
    TempDir tmp;
    fill(tmp / "s.db", 3);
    auto reader = open_sqlite_reader(tmp / "s.db");
    expect_all_views(*reader);
}

TEST(AnomalyGroups, a_store_written_before_anomaly_group_is_filled_when_opened) {
    TempDir tmp;
    const std::string db = tmp / "s.db";
    fill(db, 4);
    {
        Connection c(db, Connection::Mode::read_write_create);
        c.exec("DROP TABLE anomaly_group");
        c.exec("DROP TABLE anomaly_breadth");
        c.exec("DROP INDEX tensor_by_kind_layout");
        c.exec("DROP TABLE ship_journal");  // schema 6 (the spool) came later still
        c.exec("DROP TABLE ship_mark");
        rewrite_samples_as_version_4(c);
        c.exec("PRAGMA user_version=3");
    }
    { SqliteIngestStore reopened(db); }
    auto reader = open_sqlite_reader(db);
    expect_all_views(*reader);
}

}  // namespace
}  // namespace msmon::test
