// msmon's own detectors on real multi-rank runs written by the real msprobe (../shared/fixtures/msprobe-faults:
// 4-rank DDP, each rank fed different data, no msprobe alert rules): the healthy run stays quiet, and each fault
// run's top incident is its planted origin (FAULT.txt), as the person would read it from `msmon anomalies`.
#include <gtest/gtest.h>

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

TEST(DetectionRealRuns, the_healthy_run_raises_no_anomaly) {
    TempDir tmp;
    const std::string db = ingest_fault_run(tmp, "healthy");
    if (db.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real msprobe fault runs are not available");
    const Json all = msmon_json({program("msmon"), "anomalies", "--db", db, "--format", "json"});
    EXPECT_EQ(all.size(), 0u) << all.dump(1);
}

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
    const std::string db = ingest_fault_run(tmp, want.run);
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
                                           PlantedOrigin{"baddata", 44, 0, "actv", "module.embed.input"}),
                         [](const auto& info) { return std::string(info.param.run); });

}  // namespace
}  // namespace msmon::test
