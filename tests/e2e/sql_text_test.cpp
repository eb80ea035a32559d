// Names and filters are data, never SQL: a parameter named like an injection round-trips byte for byte, and
// CLI filters holding quotes match literally. (Every statement in store/ binds its values; the only SQL text
// built at run time is schema text from constant names in the trend-db export.)
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

TEST(SqlText, names_with_quotes_and_statements_are_stored_and_queried_literally) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string run_dir = tmp / "job/monitor_output/Nov22_13-55-47-rank0-426b92d1";
    std::filesystem::create_directories(run_dir);
    const std::string evil = "x'); DROP TABLE sample; --";
    const std::string evil2 = "y\" OR 1=1; DELETE FROM tensor WHERE '1'='1";
    // Quoted CSV fields (RFC 4180): the quote inside evil2 is doubled.
    write_file(run_dir + "/grad_reduced_0-0.csv",
               "vpp_stage,name,step,norm\n"
               "0,\"" +
                   evil +
                   "\",0,1.5\n"
                   "0,\"y\"\" OR 1=1; DELETE FROM tensor WHERE '1'='1\",0,2.5\n"
                   "0,plain.weight,0,3.5\n");
    const std::string db = tmp / "store.db";
    auto ingest = run({program("msmon"), "ingest", tmp / "job", "--db", db}, env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;

    std::string error;
    auto rows = query_rows(db, {}, env, error);
    ASSERT_TRUE(error.empty()) << error;
    ASSERT_EQ(rows.size(), 3u);
    std::set<std::string> names;
    for (const auto& r : rows) names.insert(r.name);
    EXPECT_EQ(names, (std::set<std::string>{evil, evil2, "plain.weight"}));
    auto tables = sqlite_rows(db, "SELECT count(*) FROM sqlite_master WHERE name IN ('sample_chunk', 'tensor')", error);
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_EQ(tables[0][0], "2");

    // A filter is a regex matched in msmon, a kind an exact bound value: quotes mean nothing special.
    auto by_name = query_rows(db, {"--name", "DROP TABLE"}, env, error);
    ASSERT_EQ(by_name.size(), 1u) << error;
    EXPECT_EQ(by_name[0].name, evil);
    auto by_kind = query_rows(db, {"--kind", "grad_reduced' OR '1'='1"}, env, error);
    EXPECT_TRUE(by_kind.empty()) << "a quote in --kind widened the match";
}

}  // namespace
}  // namespace msmon::test
