// msmon's own detectors on real multi-rank runs written by the real msprobe (../shared/fixtures/msprobe-faults:
// 4-rank DDP, each rank fed different data, no msprobe alert rules): the healthy run stays quiet, and each fault
// run's top incident is its planted origin (FAULT.txt), as the person would read it from `msmon anomalies`.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <ostream>

#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

using Json = nlohmann::json;

std::string ingest_fault_run(const TempDir& tmp, const std::string& name) {
    const std::string shared = shared_dir();
    if (shared.empty()) return {};
    const std::string db = tmp / (name + ".db");
    auto r =
        run({program("msmon"), "ingest", shared + "/fixtures/msprobe-faults/" + name, "--db", db}, isolated_env(tmp));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return db;
}

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
    const std::string db = ingest_fault_run(tmp, GetParam());
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
    const std::string db = ingest_fault_run(tmp, run);
    if (db.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real msprobe fault runs are not available");
    const Json incidents = msmon_json({program("msmon"), "anomalies", "--db", db, "--incidents", "--format", "json"});
    ASSERT_GE(incidents.size(), 1u);
    const Json& top = incidents[0];
    EXPECT_EQ(top["step"], want.step) << top.dump(1);
    EXPECT_EQ(top["rank"], want.rank) << top.dump(1);
    EXPECT_EQ(top["kind"], want.kind) << top.dump(1);
    EXPECT_EQ(top["name"], want.name) << top.dump(1);
    EXPECT_EQ(incidents.size(), 1u) << "one planted event, one incident: " << incidents.dump(1);
    // The plain list leads with the same origin (what `msmon anomalies --topk 1` shows).
    const Json first = msmon_json({program("msmon"), "anomalies", "--db", db, "--topk", "1", "--format", "json"});
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(first[0]["step"], want.step);
    EXPECT_EQ(first[0]["rank"], want.rank);
    EXPECT_EQ(first[0]["name"], want.name);
    EXPECT_EQ(first[0]["origin"], true);
}

INSTANTIATE_TEST_SUITE_P(PlantedFaults, DetectionFaultRun,
                         ::testing::Values(PlantedOrigin{"nan", 11, 3, "actv", "module.layers.0.fc2.output"},
                                           PlantedOrigin{"baddata", 44, 0, "actv", "module.embed.input"},
                                           PlantedOrigin{"sdc_weight", 31, 1, "param_origin",
                                                         "module.layers.0.fc2.weight"}),
                         [](const auto& info) { return std::string(info.param.run); });

// The corrupted copy, named as what happened: rank 1's weight changed between step 30's update and step 31, its
// value after the update and at the next step quoted.
TEST(DetectionRealRuns, a_weight_altered_between_two_steps_is_said_as_such_with_both_values) {
    TempDir tmp;
    const std::string db = ingest_fault_run(tmp, "sdc-weight");
    if (db.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real msprobe fault runs are not available");
    const Json incidents = msmon_json({program("msmon"), "anomalies", "--db", db, "--incidents", "--format", "json"});
    ASSERT_EQ(incidents.size(), 1u) << incidents.dump(1);
    EXPECT_EQ(incidents[0]["rule"], "ContinuityBreak");
    const std::string message = incidents[0]["message"];
    EXPECT_NE(message.find("rank 1's module.layers.0.fc2.weight changed between step 30's update and step 31 "
                           "(norm 2.462905 after the update, 2.487534 at the next step)"),
              std::string::npos)
        << message;
}

}  // namespace
}  // namespace msmon::test
