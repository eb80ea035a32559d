// Values waiting for the other ranks' same step stay within --cross-rank-memory. A one-shot
// catch-up reads rank by rank, so every step of the first ranks waits for the last; before, they were all held
// in memory (a 290 MB CSV took 788 MB). Beyond the budget they are read back from the store when judged, and the
// anomalies are the same whatever the budget.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

using Json = nlohmann::json;

struct Ingested {
    std::uint64_t peak_bytes = 0;
    std::string anomalies;                              // `msmon anomalies --format json`, as printed
    std::set<std::pair<int, std::int64_t>> cross_rank;  // rank, step of each CrossRankOutlier
};

Ingested ingest_with_budget(const TempDir& tmp, const std::string& job, const std::string& megabytes) {
    const std::string db = tmp / ("budget-" + megabytes + ".db");
    auto r = run({program("msmon"), "ingest", job, "--db", db, "--json", "--cross-rank-memory", megabytes});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Ingested out;
    out.peak_bytes = Json::parse(r.out).value("cross_rank_waiting_peak_bytes", std::uint64_t{0});
    auto a = run({program("msmon"), "anomalies", "--db", db, "--format", "json", "--topk", "100000"});
    EXPECT_EQ(a.exit_code, 0) << a.err;
    out.anomalies = a.out;
    for (const auto& x : Json::parse(a.out))
        if (x["rule"] == "CrossRankOutlier")
            out.cross_rank.insert({x["rank"].get<int>(), x["step"].get<std::int64_t>()});
    return out;
}

TEST(CrossRankMemory, waiting_values_stay_within_the_budget_and_the_anomalies_are_the_same_whatever_it_is) {
    TempDir tmp;
    const std::string job = tmp / "job";
    ASSERT_EQ(run({program("msmon"), "simulate", job, "--ranks", "8", "--steps", "120", "--params", "6", "--faults",
                   "spike@30:r5x20,spike@100:r1x20"})
                  .exit_code,
              0);
    const Ingested unbounded = ingest_with_budget(tmp, job, "1000");
    const Ingested small = ingest_with_budget(tmp, job, "0.01");  // 10 kB: a few hundred values
    const Ingested none = ingest_with_budget(tmp, job, "0");      // every value read back
    // Without a bound the catch-up held well over the small budget: the small one had to read values back.
    EXPECT_GT(unbounded.peak_bytes, 10u * 10486) << "the job is too small to test the budget";
    // A value (32 bytes) and its step's cost (3 values) over the budget at most, before the spill.
    EXPECT_LE(small.peak_bytes, 10486u + 4 * 32);
    EXPECT_LE(none.peak_bytes, 4u * 32);
    EXPECT_EQ(unbounded.cross_rank, (std::set<std::pair<int, std::int64_t>>{{1, 100}, {5, 30}}));
    EXPECT_EQ(small.anomalies, unbounded.anomalies);
    EXPECT_EQ(none.anomalies, unbounded.anomalies);
}

TEST(CrossRankMemory, a_budget_that_is_not_a_number_is_a_usage_error) {
    TempDir tmp;
    const auto r = run({program("msmon"), "ingest", tmp.path(), "--db", tmp / "s.db", "--cross-rank-memory", "lots"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--cross-rank-memory takes a number >= 0"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace msmon::test
