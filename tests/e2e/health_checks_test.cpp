// Health says what the checks across ranks can see: the replica groups the data shows, and each
// check that can't run with why and the monitor config that enables it; on the real 4-rank DDP runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

using Json = nlohmann::json;

TEST(HealthChecks, every_weight_collected_shows_the_replica_groups_and_nothing_that_cannot_run) {
    TempDir tmp;
    const std::string db = ingest_msprobe_fault_run(tmp, "params-healthy");
    if (db.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real msprobe fault runs are not available");
    auto r = run({program("msmon"), "health", "--db", db});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("checks across ranks:\n  replica groups: 4 replicas of 24 tensors (param_origin, "
                         "grad_reduced, exp_avg, exp_avg_sq, param_updated; steps 47-49)\n"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("can't run"), std::string::npos) << r.out;
    auto j = run({program("msmon"), "health", "--db", db, "--format", "json"});
    ASSERT_EQ(j.exit_code, 0) << j.err;
    const Json checks = Json::parse(j.out)["checks"];
    EXPECT_EQ(checks["replica_groups"], "4 replicas of 24 tensors");
    EXPECT_EQ(checks["learned_from_steps"], Json::array({47, 48, 49}));
    ASSERT_EQ(checks["replicas"].size(), 5u) << checks.dump(1);
    for (const auto& k : checks["replicas"]) EXPECT_EQ(k["group_size"], 4) << k.dump();
    EXPECT_TRUE(checks["cannot_run"].empty());
}

TEST(HealthChecks, without_param_distribution_the_weight_checks_are_said_not_to_run_and_how_to_enable_them) {
    TempDir tmp;
    const std::string db = ingest_msprobe_fault_run(tmp, "healthy");
    if (db.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real msprobe fault runs are not available");
    auto r = run({program("msmon"), "health", "--db", db});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("  continuity and optimizer-step checks can't run: no weights collected (param_origin and "
                         "param_updated; set \"param_distribution\": true in the monitor config)\n"),
              std::string::npos)
        << r.out;
    // The gradients and moments still show their replicas.
    EXPECT_NE(r.out.find("replica groups: 4 replicas of"), std::string::npos) << r.out;
}

TEST(HealthChecks, one_rank_alone_has_no_replica_to_compare_and_says_so) {
    TempDir tmp;
    const std::string shared = shared_dir();
    if (shared.empty())
        MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real msprobe fault runs are not available");
    const std::string node = tmp / "one";
    std::filesystem::create_directories(node);
    for (const auto& e :
         std::filesystem::directory_iterator(shared + "/fixtures/msprobe-faults/params-healthy/monitor_output"))
        if (e.path().filename().string().find("-rank2-") != std::string::npos)
            std::filesystem::copy(e.path(), node + "/" + e.path().filename().string(),
                                  std::filesystem::copy_options::recursive);
    const std::string db = tmp / "one.db";
    ASSERT_EQ(run({program("msmon"), "ingest", node, "--db", db}, isolated_env(tmp)).exit_code, 0);
    auto r = run({program("msmon"), "health", "--db", db});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("  replica check can't run: one rank here, no replica beside it\n"), std::string::npos)
        << r.out;
}

}  // namespace
}  // namespace msmon::test
