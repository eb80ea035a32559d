// A job followed live across msprobe's dynamic collections: real msprobe output (../shared/fixtures/msprobe-faults)
// written again step by step, with pauses between collections and ranks skewed, as `msmon ingest --follow` sees it.
#include <gtest/gtest.h>

#include <csignal>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

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

namespace msmon::test {
namespace {

// The real NaN run (rank 3's layers.0.fc2 output at step 11, every rank's reduced gradients after it) replayed live
// with rank 3 writing 4 s after the others, longer than an incident's 3 s settle: the others' reduced gradients
// show the NaN first. The --on-incident command still names where it began, as a one-shot ingest of the same
// files does: the announcement waits for every rank to reach the step.
TEST(LiveOrigins, a_nan_on_a_rank_writing_4_s_behind_the_others_is_announced_where_it_began) {
    if (shared_dir().empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: no real msprobe run to replay");
    TempDir tmp;
    const std::string source = shared_dir() + "/fixtures/msprobe-faults/nan/monitor_output";
    std::filesystem::create_directories(tmp / "job/monitor_output");
    Background follow({program("msmon"), "ingest", tmp / "job", "--follow", "--db", tmp / "s.db", "--on-incident",
                       "cat >> '" + (tmp / "runs.jsonl") + "'; echo >> '" + (tmp / "runs.jsonl") + "'"},
                      tmp.path(), isolated_env(tmp));
    ReplayPlan plan;
    plan.collections = {{0, 20}};
    plan.step_time = milliseconds(250);
    plan.lag[3] = milliseconds(4000);
    replay_msprobe_run(source, tmp / "job/monitor_output", plan);
    std::vector<nlohmann::json> runs;
    ASSERT_GE(wait_until(
                  [&] {
                      runs.clear();
                      std::istringstream in(read_file(tmp / "runs.jsonl"));
                      for (std::string line; std::getline(in, line);)
                          if (!line.empty()) runs.push_back(nlohmann::json::parse(line));
                      return !runs.empty();
                  },
                  milliseconds(30000))
                  .count(),
              0)
        << "no incident was announced; " << follow.err();
    ASSERT_EQ(runs.size(), 1u) << runs.back().dump();
    EXPECT_EQ(runs[0]["step"], 11) << runs[0].dump();
    EXPECT_EQ(runs[0]["rank"], 3) << runs[0].dump();
    EXPECT_EQ(runs[0]["kind"], "actv") << runs[0].dump();
    EXPECT_EQ(runs[0]["module"], "module.layers.0.fc2.output") << runs[0].dump();
    follow.signal(SIGTERM);
    EXPECT_EQ(follow.wait(milliseconds(10000)), 0) << follow.err();
}

// The simulator's job with MindFormers logs and two planted events (a spike at step 20; a NaN in rank 3's
// layers.0 MLP output at step 35), read logs first then the msprobe CSVs, and CSVs first then logs: the same
// anomalies and incidents, each origin where it began, as one read of the whole job.
TEST(LiveOrigins, logs_first_or_csvs_first_give_the_same_incidents_as_one_read) {
    TempDir tmp;
    const auto sim = run({program("msmon"), "simulate", tmp / "full", "--ranks", "4", "--steps", "50", "--params", "6",
                          "--xy", "--logs", "--faults", "spike@20,nan@35:r3:mlayers.0.mlp.linear_fc2"},
                         isolated_env(tmp));
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    const auto ingest = [&](const std::string& job, const std::string& db) {
        const auto r = run({program("msmon"), "ingest", job, "--db", db}, isolated_env(tmp));
        EXPECT_EQ(r.exit_code, 0) << r.err;
    };
    const auto listed = [&](const std::string& db, bool incidents) {
        std::vector<std::string> argv = {program("msmon"), "anomalies", "--db", db, "--format", "json"};
        if (incidents) argv.push_back("--incidents");
        const auto r = run(argv);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return r.out;
    };
    const auto copy = [&](const std::string& what, const std::string& job) {
        std::filesystem::create_directories(tmp / job);
        std::filesystem::copy(tmp / ("full/" + what), tmp / (job + "/" + what),
                              std::filesystem::copy_options::recursive);
    };
    ingest(tmp / "full", tmp / "whole.db");
    copy("output", "logs_first");
    ingest(tmp / "logs_first", tmp / "a.db");
    copy("monitor_output", "logs_first");
    ingest(tmp / "logs_first", tmp / "a.db");
    copy("monitor_output", "csvs_first");
    ingest(tmp / "csvs_first", tmp / "b.db");
    copy("output", "csvs_first");
    ingest(tmp / "csvs_first", tmp / "b.db");
    const auto whole = nlohmann::json::parse(listed(tmp / "whole.db", true));
    ASSERT_EQ(whole.size(), 2u) << whole.dump();
    EXPECT_EQ(whole[0]["kind"], "actv") << whole.dump();
    EXPECT_EQ(whole[0]["step"], 35) << whole.dump();
    EXPECT_EQ(whole[0]["rank"], 3) << whole.dump();
    EXPECT_EQ(whole[1]["step"], 20) << whole.dump();
    EXPECT_EQ(whole[1]["kind"], "actv_grad") << whole.dump();
    for (const char* db : {"a.db", "b.db"}) {
        EXPECT_EQ(nlohmann::json::parse(listed(tmp / db, true)), whole) << db;
        EXPECT_EQ(listed(tmp / db, false), listed(tmp / "whole.db", false)) << db;
    }
}

}  // namespace
}  // namespace msmon::test
