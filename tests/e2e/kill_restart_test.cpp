// Exactly once: SIGKILL `msmon ingest --follow` at random moments while a simulated run is written; after the
// last restart the store equals a clean ingest of the same files, value for value.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <thread>

#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

std::vector<std::string> sorted_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    std::sort(lines.begin(), lines.end());
    return lines;
}

std::string integrity(const std::string& db) {
    sqlite3* h = nullptr;
    if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return "cannot open";
    sqlite3_stmt* st = nullptr;
    std::string result = "no answer";
    if (sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        result = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(h);
    return result;
}

TEST(KillRestart, store_after_many_sigkills_equals_a_clean_ingest) {
    TempDir tmp;
    const std::string job = tmp / "job";
    const std::string db = tmp / "killed.db";
    const std::map<std::string, std::string> env = {{"XDG_STATE_HOME", tmp / "state"}};
    // ~3 s of live writing: 4 ranks, 8 params, steps of 40 ms, 5 steps per file (rows appended to open ranges).
    Background sim({program("msmon"), "simulate", job, "--ranks", "4", "--params", "8", "--steps", "75", "--step-ms",
                    "40", "--record-steps", "5", "--xy", "--faults", "spike@10,nan@20"},
                   tmp.path(), env);
    std::mt19937 rng(20261122);
    std::uniform_int_distribution<int> delay_ms(5, 150);
    int kills = 0;
    while (true) {
        Background ingest({program("msmon"), "ingest", job, "--follow", "--db", db}, tmp.path(), env);
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
        ingest.signal(SIGKILL);
        ASSERT_EQ(ingest.wait(std::chrono::milliseconds(5000)), -SIGKILL);
        ++kills;
        if (sim.wait(std::chrono::milliseconds(0)) != -1000) break;
    }
    // Kill a few more times over the finished tree: catch-up of a backlog is killed mid-transaction too.
    for (int i = 0; i < 10; ++i, ++kills) {
        Background ingest({program("msmon"), "ingest", job, "--follow", "--db", db}, tmp.path(), env);
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng) / 5));
        ingest.signal(SIGKILL);
        ingest.wait(std::chrono::milliseconds(5000));
    }
    auto last = run({program("msmon"), "ingest", job, "--db", db, "--json"}, env);
    ASSERT_EQ(last.exit_code, 0) << last.err;
    const std::string clean_db = tmp / "clean.db";
    auto clean = run({program("msmon"), "ingest", job, "--db", clean_db, "--json"}, env);
    ASSERT_EQ(clean.exit_code, 0) << clean.err;

    auto killed_q = run({program("msmon"), "query", "--db", db}, env);
    auto clean_q = run({program("msmon"), "query", "--db", clean_db}, env);
    ASSERT_EQ(killed_q.exit_code, 0);
    const auto a = sorted_lines(killed_q.out), b = sorted_lines(clean_q.out);
    EXPECT_GT(b.size(), 20000u);
    EXPECT_EQ(a.size(), b.size()) << "values missing or duplicated after " << kills << " kills";
    std::vector<std::string> only_a, only_b;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only_a));
    std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(only_b));
    EXPECT_TRUE(only_a.empty()) << only_a.size() << " values only in the killed store, e.g. " << only_a.front();
    EXPECT_TRUE(only_b.empty()) << only_b.size() << " values only in the clean store, e.g. " << only_b.front();
    EXPECT_EQ(integrity(db), "ok");
    EXPECT_GE(kills, 20);
    std::printf("[ kills    ] %d SIGKILLs, %zu values compared\n", kills, b.size());
}

TEST(KillRestart, reingesting_the_same_files_adds_nothing) {
    TempDir tmp;
    const std::string job = tmp / "job";
    const std::string db = tmp / "store.db";
    ASSERT_EQ(run({program("msmon"), "simulate", job, "--ranks", "2", "--steps", "10", "--params", "4"}).exit_code, 0);
    auto first = run({program("msmon"), "ingest", job, "--db", db, "--json"});
    ASSERT_EQ(first.exit_code, 0) << first.err;
    EXPECT_EQ(first.out.find("\"rows\": 0,"), std::string::npos) << first.out;
    auto q1 = run({program("msmon"), "query", "--db", db});
    auto second = run({program("msmon"), "ingest", job, "--db", db, "--json"});
    ASSERT_EQ(second.exit_code, 0);
    EXPECT_NE(second.out.find("\"rows\": 0,"), std::string::npos) << second.out;
    EXPECT_NE(second.out.find("\"values\": 0,"), std::string::npos) << second.out;
    EXPECT_EQ(run({program("msmon"), "query", "--db", db}).out, q1.out);
}

}  // namespace
}  // namespace msmon::test
