// A store that refuses a batch for good (here: a trigger planted to abort inserts of one rank's file offsets, as a
// constraint would) stops ingest at once with the store's reason and a non-zero exit, instead of retrying
// forever; what was stored before stays, nothing of the refused batch is stored, and once the store takes it
// again the next ingest reads those files in full. (Failures that pass by themselves, like a full disk, are
// retried: FsFaults.a_full_disk_under_the_store_pauses_ingest_visibly_and_it_resumes_with_nothing_lost.)
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>

#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

void exec_sql(const std::string& db, const char* sql) {
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(h, sql, nullptr, nullptr, &err);
    EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(h);
}

void write_rank(const TempDir& tmp, int rank) {
    const std::string dir = tmp / ("job/monitor_output/Nov22_13-55-47-rank" + std::to_string(rank) + "-426b92d1");
    std::filesystem::create_directories(dir);
    write_file(dir + "/grad_reduced_0-1.csv",
               "vpp_stage,name,step,norm\n0,layer.0.weight,0,1.5\n0,layer.1.weight,0,2.5\n0,layer.0.weight,1,1.25\n");
}

TEST(StoreRefusal, a_batch_the_store_refuses_stops_ingest_with_the_reason_and_is_read_in_full_later) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string db = tmp / "store.db";
    write_rank(tmp, 0);
    auto first = run({program("msmon"), "ingest", tmp / "job", "--db", db}, env);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    exec_sql(db,
             "CREATE TRIGGER refuse BEFORE INSERT ON file WHEN NEW.path LIKE '%rank1-%' BEGIN SELECT "
             "RAISE(ABORT, 'planted refusal'); END");

    write_rank(tmp, 1);
    Background refused({program("msmon"), "ingest", tmp / "job", "--db", db}, tmp.path(), env);
    const auto started = std::chrono::steady_clock::now();
    const int code = refused.wait(std::chrono::seconds(20));
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    ASSERT_NE(code, -1000) << "ingest still running after 20 s: a refused batch must not be retried forever";
    EXPECT_NE(code, 0);
    EXPECT_NE(refused.err().find("the store refuses a batch"), std::string::npos) << refused.err();
    EXPECT_NE(refused.err().find("planted refusal"), std::string::npos) << refused.err();
    EXPECT_LT(took.count(), 10000);

    std::string error;
    auto rows = query_rows(db, {}, env, error);
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_EQ(rows.size(), 3u) << "rank 0's values are kept, nothing of rank 1's refused batch is stored";
    for (const auto& r : rows) EXPECT_EQ(r.rank, "0");

    exec_sql(db, "DROP TRIGGER refuse");
    auto again = run({program("msmon"), "ingest", tmp / "job", "--db", db}, env);
    ASSERT_EQ(again.exit_code, 0) << again.err;
    rows = query_rows(db, {}, env, error);
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_EQ(rows.size(), 6u) << "rank 1's file is read in full once the store takes it";
}

// A store whose version msmon does not know (a corrupted or hostile user_version: -3 indexed the migrations out of
// bounds and ran whatever it found as SQL), and another program's database given as --db, are refused with the
// reason and left as they are.
TEST(StoreRefusal, an_unknown_store_version_or_another_programs_database_is_refused_and_left_alone) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    write_rank(tmp, 0);
    for (const std::string version : {"-3", "-1", "-2147483648", "99999"}) {
        const std::string db = tmp / ("v" + version + ".db");
        exec_sql(db, ("PRAGMA user_version=" + version).c_str());
        for (const std::vector<std::string>& args : {std::vector<std::string>{"ingest", tmp / "job", "--db", db},
                                                     {"query", "--db", db},
                                                     {"anomalies", "--db", db}}) {
            std::vector<std::string> argv = {program("msmon")};
            argv.insert(argv.end(), args.begin(), args.end());
            auto r = run(argv, env);
            EXPECT_EQ(r.exit_code, 1) << args[0] << " " << version << ": " << r.err;
            const std::string why = version == "99999" ? "is store version 99999; this msmon "
                                                       : "store version " + version + " is not one msmon knows";
            EXPECT_NE(r.err.find(why), std::string::npos) << args[0] << ": " << r.err;
        }
        std::string error;
        EXPECT_EQ(sqlite_rows(db, "PRAGMA user_version", error).at(0).at(0), version);
        EXPECT_EQ(sqlite_rows(db, "SELECT count(*) FROM sqlite_master", error).at(0).at(0), "0");
    }
    const std::string other = tmp / "other.db";
    exec_sql(other, "CREATE TABLE accounts(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO accounts VALUES (1, 'x')");
    auto r = run({program("msmon"), "ingest", tmp / "job", "--db", other}, env);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("is not an msmon store"), std::string::npos) << r.err;
    std::string error;
    EXPECT_EQ(sqlite_rows(other, "SELECT group_concat(name) FROM sqlite_master", error).at(0).at(0), "accounts");
}

// Every store says which msmon made it and which wrote it last; one from a newer msmon than this (a store
// version this one does not know) is refused naming the msmon that reads it, and left as it is.
TEST(StoreRefusal, a_store_from_a_newer_msmon_names_the_version_that_reads_it) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    write_rank(tmp, 0);
    const std::string db = tmp / "s.db";
    ASSERT_EQ(run({program("msmon"), "ingest", tmp / "job", "--db", db}, env).exit_code, 0);
    const auto version = run({program("msmon"), "--version"}, env);
    ASSERT_EQ(version.exit_code, 0);
    const std::string mine = version.out.substr(6, version.out.find(' ', 6) - 6);  // "msmon 0.1.0 (commit ..."
    std::string error;
    EXPECT_EQ(sqlite_rows(db, "SELECT key || '=' || value FROM msmon_meta ORDER BY key", error),
              (std::vector<std::vector<std::string>>{{"created_by=" + mine}, {"written_by=" + mine}}))
        << error;

    exec_sql(db, "PRAGMA user_version=99; UPDATE msmon_meta SET value = '7.3.1' WHERE key = 'written_by'");
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"ingest", tmp / "job", "--db", db}, {"query", "--db", db}, {"health", "--db", db}}) {
        std::vector<std::string> argv = {program("msmon")};
        argv.insert(argv.end(), args.begin(), args.end());
        const auto r = run(argv, env);
        EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.err;
        EXPECT_NE(r.err.find("is store version 99, written by msmon 7.3.1; this msmon " + mine), std::string::npos)
            << args[0] << ": " << r.err;
        EXPECT_NE(r.err.find("open it with msmon 7.3.1 or newer"), std::string::npos) << args[0] << ": " << r.err;
    }
    const auto tui = run({program("msmon-tui"), "--db", db, "--snapshot", "overview"}, env);
    EXPECT_NE(tui.exit_code, 0);
    EXPECT_NE((tui.out + tui.err).find("open it with msmon 7.3.1 or newer"), std::string::npos) << tui.out << tui.err;
    EXPECT_EQ(sqlite_rows(db, "PRAGMA user_version", error).at(0).at(0), "99");
}

}  // namespace
}  // namespace msmon::test
