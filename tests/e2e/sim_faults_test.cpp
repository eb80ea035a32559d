// The simulator's faults that break an invariant between ranks — a replica's weight or reduced gradient corrupted
// (sdc, sdcgrad), every rank's learning rate blown up (lr), a module that outputs only zeros (dead) — each found by
// `msmon anomalies` as one incident beginning where --truth says it was planted, with or without tensor
// parallelism (--tp); and a healthy run of data-parallel x tensor-parallel ranks raises nothing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

using Json = nlohmann::json;

constexpr int kRanks = 8;

// Simulates a small job into `tmp`, ingests it, and returns its incidents (most severe first) and --truth.
struct Simulated {
    Json incidents, anomalies, truth;
};

Simulated simulate_and_judge(const TempDir& tmp, const std::vector<std::string>& extra) {
    Simulated out;
    const auto env = isolated_env(tmp);
    std::vector<std::string> argv = {
        program("msmon"), "simulate", tmp / "job", "--ranks", std::to_string(kRanks), "--steps", "40", "--params", "8",
        "--xy",           "--seed",   "5",         "--truth", tmp / "truth.json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto sim = run(argv, env);
    EXPECT_EQ(sim.exit_code, 0) << sim.err;
    out.truth = Json::parse(read_file(tmp / "truth.json"));
    const std::string db = tmp / "job.db";
    auto ingest = run({program("msmon"), "ingest", tmp / "job", "--db", db}, env);
    EXPECT_EQ(ingest.exit_code, 0) << ingest.err;
    auto incidents = run({program("msmon"), "anomalies", "--db", db, "--incidents", "--format", "json"}, env);
    EXPECT_EQ(incidents.exit_code, 0) << incidents.err;
    out.incidents = Json::parse(incidents.out);
    auto anomalies = run({program("msmon"), "anomalies", "--db", db, "--format", "json"}, env);
    EXPECT_EQ(anomalies.exit_code, 0) << anomalies.err;
    out.anomalies = Json::parse(anomalies.out);
    return out;
}

struct PlantedFault {
    const char* test;
    const char* faults;
    int tp;
    const char* rule;
    int rank;  // -1: every rank (the incident holds all of them)
    const char* kind;
    const char* name;
};

void PrintTo(const PlantedFault& p, std::ostream* os) {
    *os << p.faults << " --tp " << p.tp;
}

class SimFaults : public ::testing::TestWithParam<PlantedFault> {};

TEST_P(SimFaults, one_incident_begins_at_the_planted_step_rank_and_tensor_as_the_truth_says) {
    const PlantedFault want = GetParam();
    TempDir tmp;
    const Simulated s = simulate_and_judge(tmp, {"--faults", want.faults, "--tp", std::to_string(want.tp)});
    ASSERT_EQ(s.incidents.size(), 1u) << "one planted event, one incident: " << s.incidents.dump(1);
    const Json& top = s.incidents[0];
    EXPECT_EQ(top["rule"], want.rule) << top.dump(1);
    EXPECT_EQ(top["step"], 25) << top.dump(1);
    EXPECT_EQ(top["kind"], want.kind) << top.dump(1);
    EXPECT_EQ(top["name"], want.name) << top.dump(1);
    if (want.rank >= 0) {
        EXPECT_EQ(top["rank"], want.rank) << top.dump(1);
        EXPECT_EQ(top["ranks"], Json::array({want.rank})) << top.dump(1);
    } else {
        EXPECT_EQ(top["ranks"], Json::array({0, 1, 2, 3, 4, 5, 6, 7})) << top.dump(1);
    }
    // --truth names the same origin (a learning rate: every weight alike, so no one tensor).
    ASSERT_EQ(s.truth["faults"].size(), 1u) << s.truth.dump(1);
    const Json& truth = s.truth["faults"][0];
    EXPECT_EQ(truth["step"], 25);
    EXPECT_EQ(truth["rank"], want.rank);
    EXPECT_EQ(truth["kind_of_tensor"], want.kind);
    EXPECT_EQ(truth["module"], std::string(want.rule) == "OptimizerStep" ? "" : want.name);
    EXPECT_EQ(s.truth["tp"], want.tp);
}

const char* const kWeight = "module.module.decoder.layers.0.mlp.linear_fc1.weight";

INSTANTIATE_TEST_SUITE_P(
    Planted, SimFaults,
    ::testing::Values(
        // A weight changed between two steps on one rank: its continuity break, and its departure from its 7
        // replicas at the same step (the continuity break is the more severe, so the origin).
        PlantedFault{"sdc", "sdc@25:r3", 1, "ContinuityBreak", 3, "param_origin", kWeight},
        // With 2 tensor-parallel shards, rank 5's replicas are ranks 1, 3 and 7.
        PlantedFault{"sdc_tp2", "sdc@25:r5", 2, "ContinuityBreak", 5, "param_origin", kWeight},
        // A LayerNorm weight is held whole on every rank: all 7 others are its replicas.
        PlantedFault{"sdc_layernorm_tp2", "sdc@25:r2:mlayers.0.input_layernorm", 2, "ContinuityBreak", 2,
                     "param_origin", "module.module.decoder.layers.0.input_layernorm.weight"},
        PlantedFault{"sdcgrad", "sdcgrad@25:r6", 1, "ReplicaDivergence", 6, "grad_reduced", kWeight},
        PlantedFault{"sdcgrad_tp2", "sdcgrad@25:r6x2", 2, "ReplicaDivergence", 6, "grad_reduced", kWeight},
        // Every rank's optimizer at once: the incident begins at the first weight in forward order.
        PlantedFault{"lr", "lr@25", 1, "OptimizerStep", -1, "derived.update_ratio",
                     "module.module.embedding.word_embeddings.weight"},
        PlantedFault{"lr_tp2", "lr@25x30", 2, "OptimizerStep", -1, "derived.update_ratio",
                     "module.module.embedding.word_embeddings.weight"},
        PlantedFault{"dead", "dead@25", 1, "DeadLayer", -1, "actv",
                     "module.module.decoder.layers.0.mlp.linear_fc1.output"},
        PlantedFault{"dead_tp2", "dead@25:mlayers.0.self_attention.linear_qkv", 2, "DeadLayer", -1, "actv",
                     "module.module.decoder.layers.0.self_attention.linear_qkv.output"}),
    [](const auto& info) { return std::string(info.param.test); });

// What follows a corrupted reduced gradient stays on its rank and tensor: its param_updated at the step, Adam's
// first moment and the next param_origin a step later (msprobe reads the moments before the update).
TEST(SimFaults, a_corrupted_reduced_gradient_is_followed_by_that_ranks_moments_and_weights_only) {
    TempDir tmp;
    const Simulated s = simulate_and_judge(tmp, {"--faults", "sdcgrad@25:r6"});
    std::vector<std::string> followed;
    for (const auto& a : s.anomalies) {
        EXPECT_EQ(a["rank"], 6) << a.dump();
        EXPECT_EQ(a["name"], kWeight) << a.dump();
        followed.push_back(a["kind"].get<std::string>() + "@" + std::to_string(a["step"].get<int>()));
    }
    std::sort(followed.begin(), followed.end());
    EXPECT_EQ(followed,
              (std::vector<std::string>{"exp_avg@26", "grad_reduced@25", "param_origin@26", "param_updated@25"}));
}

TEST(SimFaults, a_healthy_data_parallel_by_tensor_parallel_run_raises_no_anomaly) {
    TempDir tmp;
    const Simulated s = simulate_and_judge(tmp, {"--tp", "2"});
    EXPECT_EQ(s.anomalies.size(), 0u) << s.anomalies.dump(1);
    EXPECT_EQ(s.truth["tp"], 2);
    // The layout is the one asked for: replicas agree within a shard, shards hold their own values.
    auto health = run({program("msmon"), "health", "--db", tmp / "job.db"}, isolated_env(tmp));
    EXPECT_EQ(health.exit_code, 0) << health.err;
    EXPECT_NE(health.out.find("replica groups: 4 replicas of 8 tensors"), std::string::npos) << health.out;
}

TEST(SimFaults, tp_must_divide_the_ranks) {
    TempDir tmp;
    auto r = run({program("msmon"), "simulate", tmp / "job", "--ranks", "6", "--tp", "4"}, isolated_env(tmp));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--tp 4 must divide --ranks"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace msmon::test
