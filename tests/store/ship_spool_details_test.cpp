// The spool's per-node details (store/ship_spool_details.cpp): parse issues after a mark, the file count, and
// module structure with stacks merged as the SQLite reader answers module_info; and the v6 → v7 migration
// that gave ship_mark their marks. Real SQLite throughout.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "store/reader.hpp"
#include "store/schema.hpp"
#include "store/ship_spool.hpp"
#include "store/sqlite_ingest_store.hpp"
#include "tests/support/old_store.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

const std::string kDestination = "clickhouse://127.0.0.1:1/msmon job=j node=n";

// Rank 0 has two runs whose stacks of one module differ (the second inserted first), rank 1 one run;
// structures with and without msprobe's "0:" prefix; a module with a structure only, and one with a stack
// only.
RecordBatch details_batch() {
    RecordBatch b;
    b.new_runs = {{1, 0, "/job/run-a-rank0", "a", "u1", "msprobe"},
                  {2, 0, "/job/run-b-rank0", "b", "u2", "msprobe"},
                  {3, 1, "/job/run-a-rank1", "a", "u3", "msprobe"}};
    FileProgress f;
    f.id = 1;
    f.run_id = 1;
    f.path = "/job/run-a-rank0/grad_reduced_0-0.csv";
    f.kind = "grad_reduced";
    b.files.push_back(f);
    f.id = 2;
    f.run_id = 3;
    f.path = "/job/run-a-rank1/grad_reduced_0-0.csv";
    b.files.push_back(f);
    b.issues = {{1, "", 3, "expected 8 fields, found 7", "all_reduce,0.5"},
                {2, "", 4, "not a number: abc", "0,w,0,abc"},
                {1, "", 9, "step is not an integer", "0,w,1.5"}};
    b.module_structs = {{0, "0:layers.0.fc1", R"({"rank": 0})"},
                        {1, "0:layers.0.fc1", R"({"rank": 1})"},
                        {0, "decoder", R"({"output": "tensor"})"}};
    b.stacks = {{2, "0:layers.0.fc1", "stack of run b"},
                {1, "0:layers.0.fc1", "stack of run a"},
                {1, "0:embed", "embed stack of rank 0"},
                {3, "0:embed", "embed stack of rank 1"}};
    return b;
}

using ModuleRow = std::tuple<int, std::string, std::string, std::string>;

std::vector<ModuleRow> rows_of(const std::vector<SpoolModule>& modules) {
    std::vector<ModuleRow> out;
    for (const auto& m : modules) out.emplace_back(m.rank, m.module, m.structure, m.stack);
    return out;
}

TEST(ShipSpoolDetails, issues_files_and_modules_are_read_as_the_sqlite_reader_answers) {
    TempDir tmp;
    const std::string db = tmp / "s.db";
    SqliteIngestStore store(db, kDestination);
    store.commit(details_batch());
    ShipSpool spool(db);

    const auto issues = spool.issues_after(0, 100);
    ASSERT_EQ(issues.size(), 3u);
    EXPECT_EQ(issues[0].id, 1);
    EXPECT_EQ(issues[0].issue.path, "/job/run-a-rank0/grad_reduced_0-0.csv");
    EXPECT_EQ(issues[1].issue.path, "/job/run-a-rank1/grad_reduced_0-0.csv");
    EXPECT_EQ(issues[1].issue.line, 4);
    EXPECT_EQ(issues[1].issue.reason, "not a number: abc");
    EXPECT_EQ(issues[1].issue.excerpt, "0,w,0,abc");
    EXPECT_EQ(spool.issues_after(1, 1).size(), 1u);
    EXPECT_EQ(spool.issues_after(1, 1).at(0).id, 2);
    EXPECT_TRUE(spool.issues_after(3, 100).empty());
    EXPECT_EQ(spool.file_count(), 2);

    std::uint64_t hash = 0;
    const auto modules = spool.modules(hash);
    const std::vector<ModuleRow> expected = {
        {0, "0:embed", "", "embed stack of rank 0"},
        {0, "0:layers.0.fc1", R"({"rank": 0})", "stack of run a"},  // the rank's first run
        {0, "decoder", R"({"output": "tensor"})", ""},
        {1, "0:embed", "", "embed stack of rank 1"},
        {1, "0:layers.0.fc1", R"({"rank": 1})", ""},
    };
    EXPECT_EQ(rows_of(modules), expected);
    // What the SQLite reader answers for these is what the rows say.
    auto reader = open_sqlite_reader(db);
    const auto fc1 = reader->module_info(0, "layers.0.fc1.weight");
    EXPECT_EQ(fc1.module, "0:layers.0.fc1");
    EXPECT_EQ(fc1.structure, R"({"rank": 0})");
    EXPECT_EQ(fc1.stack, "stack of run a");
    EXPECT_EQ(reader->module_info(0, "decoder.final.weight").module, "decoder");
    EXPECT_EQ(reader->module_info(1, "embed.weight").stack, "embed stack of rank 1");

    // The hash moves with the content only.
    std::uint64_t again = 0;
    spool.modules(again);
    EXPECT_EQ(again, hash);
    RecordBatch change;
    change.module_structs = {{1, "0:layers.0.fc1", R"({"rank": 1, "v": 2})"}};
    store.commit(change);
    std::uint64_t changed = 0;
    spool.modules(changed);
    EXPECT_NE(changed, hash);
}

TEST(ShipSpoolDetails, a_version_6_spool_is_upgraded_keeping_its_marks_with_issues_and_modules_still_to_ship) {
    TempDir tmp;
    const std::string db = tmp / "s.db";
    SpoolMark before;
    {
        SqliteIngestStore store(db, kDestination);
        store.commit(details_batch());
        ShipSpool spool(db);
        before = spool.mark();
        before.anomaly_id = 3;
        before.event_id = 2;
        before.checkpoint_hash = 77;
        before.checkpoint_gen = 4;
        spool.advance(before);
    }
    {
        Connection c(db, Connection::Mode::read_write_create);
        rewrite_ship_mark_as_version_6(c);
        c.exec("PRAGMA user_version=6");
    }
    { SqliteIngestStore upgraded(db, kDestination); }
    {
        Connection c(db, Connection::Mode::read_only);
        Statement v(c, "PRAGMA user_version");
        ASSERT_TRUE(v.step());
        EXPECT_EQ(v.int64(0), kSchemaVersion);
    }
    ShipSpool spool(db);
    SpoolMark m = spool.mark();
    EXPECT_EQ(m.destination, kDestination);
    EXPECT_EQ(m.spool, before.spool);
    EXPECT_EQ(m.anomaly_id, 3);
    EXPECT_EQ(m.event_id, 2);
    EXPECT_EQ(m.checkpoint_hash, 77u);
    EXPECT_EQ(m.checkpoint_gen, 4);
    // Nothing of the new kinds was shipped before v7: they all wait, from the first.
    EXPECT_EQ(m.issue_id, 0);
    EXPECT_EQ(m.module_hash, 0u);
    EXPECT_EQ(m.module_gen, 0);
    EXPECT_EQ(spool.issues_after(m.issue_id, 100).size(), 3u);

    m.issue_id = 2;
    m.module_hash = 12345;
    m.module_gen = 1;
    spool.advance(m);
    const SpoolMark after = spool.mark();
    EXPECT_EQ(after.issue_id, 2);
    EXPECT_EQ(after.module_hash, 12345u);
    EXPECT_EQ(after.module_gen, 1);
    EXPECT_EQ(after.anomaly_id, 3);
}

}  // namespace
}  // namespace msmon::test
