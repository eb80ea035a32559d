// A job followed live across msprobe's dynamic collections: real msprobe output (../shared/fixtures/msprobe-faults)
// written again step by step, with pauses between collections and ranks skewed, as `msmon ingest --follow` sees it.
#include <gtest/gtest.h>

#include <csignal>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/support/e2e_support.hpp"
#include "tests/support/run_replay.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

using Json = nlohmann::json;
using std::chrono::milliseconds;

Json detected(const std::string& db) {
    auto r = run({program("msmon"), "anomalies", "--db", db, "--format", "json", "--source", "detected"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? Json::parse(r.out) : Json::array();
}

std::vector<Json> stalls(const std::string& db) {
    std::vector<Json> out;
    for (const auto& a : detected(db))
        if (a["rule"] == "StalledRank") out.push_back(a);
    return out;
}

// The ranks with grad_reduced norms of `step` in the store.
std::size_t ranks_at_step(const std::string& db, std::int64_t step) {
    std::string error;
    std::set<std::string> ranks;
    for (const auto& row :
         query_rows(db, {"--kind", "grad_reduced", "--op", "norm", "--steps", std::to_string(step)}, {}, error))
        ranks.insert(row.rank);
    return ranks.size();
}

class LiveCollections : public ::testing::Test {
protected:
    void SetUp() override {
        if (shared_dir().empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: no real msprobe run to replay");
        source_ = shared_dir() + "/fixtures/msprobe-faults/healthy/monitor_output";
        std::filesystem::create_directories(tmp_ / "job/monitor_output");
        follow_ = std::make_unique<Background>(
            std::vector<std::string>{program("msmon"), "ingest", tmp_ / "job", "--follow", "--db", db()}, tmp_.path(),
            isolated_env(tmp_));
    }
    void TearDown() override {
        if (!follow_) return;
        follow_->signal(SIGTERM);
        EXPECT_EQ(follow_->wait(milliseconds(10000)), 0) << follow_->err();
    }
    std::string db() const { return tmp_ / "store.db"; }
    void replay(const ReplayPlan& plan) { replay_msprobe_run(source_, tmp_ / "job/monitor_output", plan); }

    TempDir tmp_;
    std::string source_;
    std::unique_ptr<Background> follow_;
};

// Steps 0-4 collected, 3 s off, 10-14, 25 s off, 40-44 (msprobe's dynamic collection turned on three times), rank 2
// writing each step 0.6 s after the others: every rank paused together, and a rank 0.6 s behind is not stalled.
TEST_F(LiveCollections, a_25_s_pause_between_collections_with_a_rank_0_6_s_behind_raises_no_stall) {
    ReplayPlan plan;
    plan.collections = {{0, 4}, {10, 14, milliseconds(3000)}, {40, 44, milliseconds(25000)}};
    plan.lag[2] = milliseconds(600);
    replay(plan);
    ASSERT_GE(wait_until([&] { return ranks_at_step(db(), 44) == 4; }, milliseconds(20000)).count(), 0)
        << follow_->err();
    for (const auto& a : stalls(db())) ADD_FAILURE() << "a pause of every rank raised " << a.dump();
}

// The same collections, but rank 1 stops at step 42 while the others write on to 49: one stall, rank 1 at step 42.
TEST_F(LiveCollections, a_rank_that_stops_while_the_others_go_on_after_a_pause_is_one_stall) {
    ReplayPlan plan;
    plan.collections = {{0, 4}, {10, 14, milliseconds(3000)}, {40, 49, milliseconds(10000)}};
    plan.last_step[1] = 42;
    replay(plan);
    std::vector<Json> found;
    ASSERT_GE(wait_until(
                  [&] {
                      found = stalls(db());
                      return !found.empty();
                  },
                  milliseconds(20000))
                  .count(),
              0)
        << "rank 1 stopped at step 42 while the others wrote 43-49, and no stall was raised";
    ASSERT_EQ(found.size(), 1u) << found[1].dump();
    EXPECT_EQ(found[0]["rank"], 1) << found[0].dump();
    EXPECT_EQ(found[0]["step"], 42) << found[0].dump();
}

}  // namespace
}  // namespace msmon::test
