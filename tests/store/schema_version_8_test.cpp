// Schema version 8 (file.issues: a file's malformed lines, stored or only counted): a version 7 store is read as it
// is by a read-only opener, and upgraded by a writer with each file's count taken from its stored parse issues.
#include <gtest/gtest.h>

#include "store/reader.hpp"
#include "store/schema.hpp"
#include "store/sqlite_ingest_store.hpp"
#include "tests/support/e2e_support.hpp"
#include "tests/support/old_store.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

TEST(SchemaVersion8, a_version_7_store_is_read_as_it_is_and_upgraded_with_each_files_issue_count) {
    TempDir tmp;
    const std::string db = tmp / "s.db";
    {
        SqliteIngestStore store(db);
        RecordBatch b;
        b.new_runs.push_back({1, 0, "/job/run0", "Nov22_10-00-00", "0000abcd", "msprobe"});
        for (std::int64_t id : {1, 2}) {
            FileProgress f;
            f.id = id;
            f.run_id = 1;
            f.path = "/job/run0/grad_reduced_" + std::to_string(id) + ".csv";
            f.kind = "grad_reduced";
            b.files.push_back(f);
        }
        for (std::int64_t file : {1, 1, 2}) b.issues.push_back({file, "", 3, "bad quoting", "0,\"w"});
        store.commit(b);
    }
    {
        Connection c(db, Connection::Mode::read_write_create);
        rewrite_file_as_version_7(c);
        c.exec("PRAGMA user_version=7");
    }
    EXPECT_EQ(open_sqlite_reader(db)->issue_count(), 3u) << "a version 7 store, read only";
    { SqliteIngestStore upgraded(db); }
    std::string error;
    EXPECT_EQ(sqlite_rows(db, "SELECT id, issues FROM file ORDER BY id", error),
              (std::vector<std::vector<std::string>>{{"1", "2"}, {"2", "1"}}))
        << error;
    EXPECT_EQ(sqlite_rows(db, "PRAGMA user_version", error).at(0).at(0), std::to_string(kSchemaVersion));
    EXPECT_EQ(open_sqlite_reader(db)->issue_count(), 3u);
}

}  // namespace
}  // namespace msmon::test
