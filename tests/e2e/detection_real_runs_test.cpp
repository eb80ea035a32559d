// msmon's own detectors on real multi-rank runs written by the real msprobe (../shared/fixtures/msprobe-faults:
// 4-rank DDP, each rank fed different data, no msprobe alert rules): the healthy run stays quiet, and each fault
// run's top incident is its planted origin (FAULT.txt), as the person would read it from `msmon anomalies`.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>

#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

using Json = nlohmann::json;

Json msmon_json(const std::vector<std::string>& args) {
    auto r = run(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return Json::parse(r.out);
}

// Both healthy runs: without the weights, and with param_distribution on (every weight before and after each
// update: the replica and continuity checks have everything to look at, and must find nothing).
class DetectionHealthyRun : public ::testing::TestWithParam<const char*> {};

TEST_P(DetectionHealthyRun, raises_no_anomaly) {
    TempDir tmp;
    const std::string db = ingest_msprobe_fault_run(tmp, GetParam());
    if (db.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real msprobe fault runs are not available");
    const Json all = msmon_json({program("msmon"), "anomalies", "--db", db, "--format", "json"});
    EXPECT_EQ(all.size(), 0u) << all.dump(1);
}

INSTANTIATE_TEST_SUITE_P(HealthyRuns, DetectionHealthyRun, ::testing::Values("healthy", "params-healthy"),
                         [](const auto& info) { return std::string(info.param) == "healthy" ? "healthy" : "params"; });

struct PlantedOrigin {
    const char* run;
    std::int64_t step;
    int rank;
    const char* kind;
    const char* name;
    // Incidents in all: one planted event is one incident, unless a false alarm is known (named where listed).
    std::size_t incidents = 1;
};

void PrintTo(const PlantedOrigin& p, std::ostream* os) {
    *os << p.run << ": step " << p.step << ", rank " << p.rank << ", " << p.kind << " " << p.name;
}

class DetectionFaultRun : public ::testing::TestWithParam<PlantedOrigin> {};

TEST_P(DetectionFaultRun, the_top_incident_is_the_planted_origin_and_the_top_anomaly_too) {
    const PlantedOrigin want = GetParam();
    TempDir tmp;
    std::string run = want.run;
    std::replace(run.begin(), run.end(), '_', '-');  // test names cannot hold '-'
    const std::string db = ingest_msprobe_fault_run(tmp, run);
    if (db.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real msprobe fault runs are not available");
    const Json incidents = msmon_json({program("msmon"), "anomalies", "--db", db, "--incidents", "--format", "json"});
    ASSERT_GE(incidents.size(), 1u);
    const Json& top = incidents[0];
    EXPECT_EQ(top["step"], want.step) << top.dump(1);
    EXPECT_EQ(top["rank"], want.rank) << top.dump(1);
    EXPECT_EQ(top["kind"], want.kind) << top.dump(1);
    EXPECT_EQ(top["name"], want.name) << top.dump(1);
    EXPECT_EQ(incidents.size(), want.incidents) << "one planted event, one incident: " << incidents.dump(1);
    // The plain list leads with the same origin (what `msmon anomalies --topk 1` shows).
    const Json first = msmon_json({program("msmon"), "anomalies", "--db", db, "--topk", "1", "--format", "json"});
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(first[0]["step"], want.step);
    EXPECT_EQ(first[0]["rank"], want.rank);
    EXPECT_EQ(first[0]["name"], want.name);
    EXPECT_EQ(first[0]["origin"], true);
}

INSTANTIATE_TEST_SUITE_P(
    PlantedFaults, DetectionFaultRun,
    ::testing::Values(PlantedOrigin{"nan", 11, 3, "actv", "module.layers.0.fc2.output"},
                      PlantedOrigin{"baddata", 44, 0, "actv", "module.embed.input"},
                      PlantedOrigin{"sdc_weight", 31, 1, "param_origin", "module.layers.0.fc2.weight"},
                      // A second incident, a known false alarm: step 6, module.final_norm.bias's
                      // reduced gradient dips 12x for one step on every rank (Jump).
                      PlantedOrigin{"sdc_grad", 22, 3, "grad_reduced", "module.layers.2.fc1.weight", 2},
                      // Every rank's optimizer: the incident's first rank and weight.
                      PlantedOrigin{"lr_blowup", 35, 0, "derived.update_ratio", "module.embed.weight"}),
    [](const auto& info) { return std::string(info.param.run); });

// The corrupted copy, named as what happened: rank 1's weight changed between step 30's update and step 31, its
// value after the update and at the next step quoted.
TEST(DetectionRealRuns, a_weight_altered_between_two_steps_is_said_as_such_with_both_values) {
    TempDir tmp;
    const std::string db = ingest_msprobe_fault_run(tmp, "sdc-weight");
    if (db.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real msprobe fault runs are not available");
    const Json incidents = msmon_json({program("msmon"), "anomalies", "--db", db, "--incidents", "--format", "json"});
    ASSERT_EQ(incidents.size(), 1u) << incidents.dump(1);
    EXPECT_EQ(incidents[0]["rule"], "ContinuityBreak");
    const std::string message = incidents[0]["message"];
    EXPECT_NE(message.find("rank 1's module.layers.0.fc2.weight changed between step 30's update and step 31 "
                           "(norm 2.463 after the update, 2.488 at the next step)"),
              std::string::npos)
        << message;
}

// The replica that departed, named with its group: rank 3's reduced gradient against ranks 0-2's, both values and
// the difference; what follows from it (the moments and weights of that tensor on rank 3) is the same incident.
TEST(DetectionRealRuns, a_reduced_gradient_that_departs_from_its_replicas_names_them_and_both_values) {
    TempDir tmp;
    const std::string db = ingest_msprobe_fault_run(tmp, "sdc-grad");
    if (db.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real msprobe fault runs are not available");
    const Json incidents = msmon_json({program("msmon"), "anomalies", "--db", db, "--incidents", "--format", "json"});
    ASSERT_GE(incidents.size(), 1u);
    EXPECT_EQ(incidents[0]["rule"], "ReplicaDivergence");
    EXPECT_EQ(incidents[0]["message"],
              "rank 3's grad_reduced departs from its 3 replicas (ranks 0-2) at step 22: module.layers.2.fc1.weight "
              "norm 0.1657 against their 0.1105 (+50.00%)");
    const Json all = msmon_json({program("msmon"), "anomalies", "--db", db, "--format", "json"});
    std::vector<std::string> followed;
    for (const auto& a : all) {
        if (a["incident"] != 1) continue;
        EXPECT_EQ(a["rank"], 3) << a.dump();
        EXPECT_EQ(a["name"], "module.layers.2.fc1.weight") << a.dump();
        EXPECT_EQ(a["replicas"], Json::array({0, 1, 2})) << a.dump();
        followed.push_back(a["kind"].get<std::string>() + "@" + std::to_string(a["step"].get<int>()));
    }
    std::sort(followed.begin(), followed.end());
    // exp_avg_sq's norm (3.3e-05) prints too few digits to tell replicas from shards: it is not compared.
    EXPECT_EQ(followed,
              (std::vector<std::string>{"exp_avg@23", "grad_reduced@22", "param_origin@23", "param_updated@22"}));
}

// Every rank's learning rate ×20 from step 35: one incident at step 35 on all 4 ranks, its rule and message naming
// the optimizer, not a layer.
TEST(DetectionRealRuns, a_learning_rate_blown_up_on_every_rank_is_one_optimizer_incident_on_all_ranks) {
    TempDir tmp;
    const std::string db = ingest_msprobe_fault_run(tmp, "lr-blowup");
    if (db.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real msprobe fault runs are not available");
    const Json incidents = msmon_json({program("msmon"), "anomalies", "--db", db, "--incidents", "--format", "json"});
    ASSERT_EQ(incidents.size(), 1u) << incidents.dump(1);
    const Json& top = incidents[0];
    EXPECT_EQ(top["rule"], "OptimizerStep");
    EXPECT_EQ(top["step"], 35);
    EXPECT_EQ(top["ranks"], Json::array({0, 1, 2, 3}));
    const std::string m = top["message"];
    EXPECT_EQ(m.rfind("the optimizer's step grew at step 35 on 4 of 4 ranks: on rank 0 the update/weight ratio of 18 "
                      "of 24 weights jumped",
                      0),
              0u)
        << m;
    EXPECT_NE(m.find("the learning rate, its schedule, the loss scale or the optimizer's state changed"),
              std::string::npos)
        << m;
}

// layers.1.fc1.bias set to -50 on every rank at step 18: the incident begins at layers.1.fc1's output (the module
// that changed first) on all 4 ranks, and says the layer died (layers.1.act's output all zeros from then on).
TEST(DetectionRealRuns, a_layer_whose_outputs_turn_all_zero_is_said_to_have_died_where_it_began) {
    TempDir tmp;
    const std::string db = ingest_msprobe_fault_run(tmp, "dead-layer");
    if (db.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real msprobe fault runs are not available");
    const Json incidents = msmon_json({program("msmon"), "anomalies", "--db", db, "--incidents", "--format", "json"});
    ASSERT_GE(incidents.size(), 1u);
    const Json& top = incidents[0];
    EXPECT_EQ(top["rule"], "DeadLayer");
    EXPECT_EQ(top["step"], 18);
    EXPECT_EQ(top["name"], "module.layers.1.fc1.output");
    EXPECT_EQ(top["ranks"], Json::array({0, 1, 2, 3}));
    const std::string m = top["message"];
    EXPECT_EQ(m.rfind("the layer module.layers.1 died at step 18 on rank 0: module.layers.1.act.output is all zeros "
                      "from this step (zeros 0 -> 1), after module.layers.1.fc1.output's norm jumped x",
                      0),
              0u)
        << m;
}

// One node of a job split over two (ranks 0-1 of sdc-weight): two replicas that disagree are a tie, said as one,
// and rank 1's own continuity break is the incident's origin.
TEST(DetectionRealRuns, two_replicas_that_disagree_are_a_tie_and_the_continuity_break_settles_it) {
    TempDir tmp;
    const std::string shared = shared_dir();
    if (shared.empty())
        MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real msprobe fault runs are not available");
    const std::string node = tmp / "node1";
    std::filesystem::create_directories(node);
    for (const auto& e :
         std::filesystem::directory_iterator(shared + "/fixtures/msprobe-faults/sdc-weight/monitor_output")) {
        const std::string name = e.path().filename();
        if (name.find("-rank0-") != std::string::npos || name.find("-rank1-") != std::string::npos)
            std::filesystem::copy(e.path(), node + "/" + name, std::filesystem::copy_options::recursive);
    }
    const std::string db = tmp / "node1.db";
    auto r = run({program("msmon"), "ingest", node, "--db", db}, isolated_env(tmp));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json incidents = msmon_json({program("msmon"), "anomalies", "--db", db, "--incidents", "--format", "json"});
    ASSERT_EQ(incidents.size(), 1u) << incidents.dump(1);
    EXPECT_EQ(incidents[0]["rule"], "ContinuityBreak");
    EXPECT_EQ(incidents[0]["rank"], 1);
    EXPECT_EQ(incidents[0]["step"], 31);
    const Json all = msmon_json({program("msmon"), "anomalies", "--db", db, "--format", "json"});
    int ties = 0;
    for (const auto& a : all) {
        if (a["rule"] != "ReplicaTie") continue;
        ++ties;
        EXPECT_EQ(a["step"], 31);
        const std::string m = a["message"];
        EXPECT_NE(m.find("no value holds a majority, so which copy changed can't be told"), std::string::npos) << m;
    }
    // One per side, for param_origin and param_updated: rank 0's says rank 1 differs and the other way round.
    EXPECT_EQ(ties, 4) << all.dump(1);
    bool rank0_side = false;
    for (const auto& a : all)
        if (a["rule"] == "ReplicaTie" && a["rank"] == 0 && a["kind"] == "param_origin") {
            rank0_side = true;
            EXPECT_EQ(a["message"],
                      "rank 0 and rank 1, replicas of module.layers.0.fc2.weight (param_origin), disagree at step 31: "
                      "norm 2.463 on rank 0, 2.488 on rank 1 (-0.99%); no value holds a majority, so which "
                      "copy changed can't be told from the replicas alone");
        }
    EXPECT_TRUE(rank0_side);
}

}  // namespace
}  // namespace msmon::test
