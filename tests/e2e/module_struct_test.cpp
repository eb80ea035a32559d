// module_struct.json (print_struct) is kept per rank and module, so a view can show where a module sits.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

int count_rows(const std::string& db, const std::string& sql) {
    sqlite3* h = nullptr;
    sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* st = nullptr;
    int n = -1;
    if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return n;
}

TEST(ModuleStruct, every_module_of_a_written_struct_file_is_kept_per_rank) {
    TempDir tmp;
    const std::string dir = tmp / "job/monitor_output/module_struct/rank3";
    std::filesystem::create_directories(dir);
    write_file(dir + "/module_struct.json",
               "{\n  \"0:\": {\"input\": {\"config\": \"list[1]\"}},\n  \"0:layers.0.fc1\": {\"output\": {\"config\": "
               "\"tensor\", \"tensor\": \"size=(8, 32), dtype=torch.float32\"}}\n}");
    const std::string db = tmp / "store.db";
    ASSERT_EQ(run({program("msmon"), "ingest", tmp / "job", "--db", db}).exit_code, 0);
    EXPECT_EQ(count_rows(db, "SELECT count(*) FROM module_struct WHERE rank = 3"), 2);
    EXPECT_EQ(count_rows(db,
                         "SELECT count(*) FROM module_struct WHERE module = '0:layers.0.fc1' AND json LIKE "
                         "'%size=(8, 32)%'"),
              1);
}

// Earlier msprobe versions wrote the structure as one $MONITOR_OUTPUT_DIR/module_struct.json.
TEST(ModuleStruct, the_single_file_layout_of_earlier_versions_is_read_as_rank_0) {
    TempDir tmp;
    const std::string dir = tmp / "job/monitor_output";
    std::filesystem::create_directories(dir);
    write_file(dir + "/module_struct.json",
               "{\n  \"0:\": {\"input\": {\"config\": \"list[1]\"}},\n  \"0:layers.0.fc1\": {\"output\": "
               "{\"config\": \"tensor\", \"tensor\": \"size=(8, 32), dtype=torch.float32\"}}\n}");
    const std::string db = tmp / "store.db";
    ASSERT_EQ(run({program("msmon"), "ingest", tmp / "job", "--db", db}).exit_code, 0);
    EXPECT_EQ(count_rows(db, "SELECT count(*) FROM module_struct WHERE rank = 0"), 2);
}

TEST(ModuleStruct, the_real_print_struct_fixture_keeps_all_14_modules) {
    const std::string shared = shared_dir();
    if (shared.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: real msprobe fixtures not available");
    TempDir tmp;
    const std::string db = tmp / "store.db";
    ASSERT_EQ(run({program("msmon"), "ingest", shared + "/fixtures/msprobe-real/struct", "--db", db}).exit_code, 0);
    EXPECT_EQ(count_rows(db, "SELECT count(*) FROM module_struct WHERE rank = 0"), 14);
}

}  // namespace
}  // namespace msmon::test
