// A one-shot ingest cut short by SIGINT or SIGTERM: it said "ingested 19200 files" and exited 0 with about 29% of the
// folder stored. Now it exits 130 or 143 within 2 s of the signal, says how much is stored and to run it again, and a
// second run completes the store to what one whole ingest gives. (A follower stopped so exits 0: that is how it
// stops; tests/e2e/cli_contract_test.cpp and the service tests hold that.)
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

#ifdef MSMON_SANITIZED
constexpr double kSignalSeconds = 10;  // a sanitizer's exit checks are slow
#else
constexpr double kSignalSeconds = 2;
#endif

TEST(InterruptedIngest, a_signal_ends_a_one_shot_ingest_with_128_plus_it_and_a_second_run_completes_the_store) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    // Large enough that reading it takes well over the time the signal needs (2 s in the Release build).
    const auto sim =
        run({program("msmon"), "simulate", tmp / "job", "--ranks", "32", "--steps", "100", "--params", "4"}, env);
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    const auto whole = run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "whole.db", "--json"}, env);
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    const auto norms = [&](const std::string& db) {
        return run({program("msmon"), "query", "--db", db, "--rank", "31", "--op", "norm", "--format", "csv"}, env).out;
    };
    for (const int sig : {SIGINT, SIGTERM}) {
        const std::string db = tmp / ("cut-" + std::to_string(sig) + ".db");
        Background ingest({program("msmon"), "ingest", tmp / "job", "--db", db, "--json"}, tmp.path(), env);
        // The signal once the first rows are committed (the program's own progress), while most is still to read.
        std::string error;
        ASSERT_GE(wait_until(
                      [&] {
                          if (!std::filesystem::exists(db)) return false;  // never made by the test's own read
                          const auto rows = sqlite_rows(db, "SELECT count(*) FROM file WHERE offset > 0", error);
                          return !rows.empty() && rows[0][0] != "0";
                      },
                      milliseconds(60000))
                      .count(),
                  0)
            << ingest.err();
        ingest.signal(sig);
        const auto signalled = std::chrono::steady_clock::now();
        const int code = ingest.wait(milliseconds(30000));
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
        ASSERT_EQ(code, 128 + sig) << "it read everything before the signal came, or ignored it: " << ingest.out()
                                   << ingest.err();
        EXPECT_LT(took, kSignalSeconds) << "the signal took " << took << " s to end it";
        EXPECT_NE(ingest.err().find("msmon ingest: interrupted: "), std::string::npos) << ingest.err();
        EXPECT_NE(ingest.err().find(" rows stored so far, of "), std::string::npos) << ingest.err();
        EXPECT_NE(ingest.err().find(" files found; run it again to go on"), std::string::npos) << ingest.err();
        const auto said = nlohmann::json::parse(ingest.out());
        EXPECT_EQ(said.at("interrupted"), sig == SIGINT ? "SIGINT" : "SIGTERM");
        EXPECT_LT(said.at("rows").get<long long>(), json_count(whole.out, "rows")) << "it stored everything";
        // Run again: the store becomes what one whole ingest gives.
        const auto again = run({program("msmon"), "ingest", tmp / "job", "--db", db, "--json"}, env);
        ASSERT_EQ(again.exit_code, 0) << again.err;
        EXPECT_EQ(json_count(again.out, "series"), json_count(whole.out, "series"));
        EXPECT_EQ(norms(db), norms(tmp / "whole.db"));
    }
}

}  // namespace
}  // namespace msmon::test
