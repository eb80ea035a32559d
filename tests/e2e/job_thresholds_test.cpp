// MindFormers' own checks are judged with the job's thresholds (its data-skip lines, its stop line, its config as
// the log pprints it), a flag overrides them, and `msmon health` says which it used. On the rendered worker log of
// the spec (../shared/fixtures/mindformers-rendered/worker_0.log: thresholds 3.0 and 2, global norms 47.3 and 51.2
// at steps 3 and 4, embedding norms 260.1 and 313.9), ingested through the real `msmon`.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// The config as MindFormers' base_trainer pprints it to stdout on rank 0 (no logger prefix).
const char* const kPprintedConfig =
    "{'callbacks': [{'type': 'MFLossMonitor'},\n"
    "               {'checkpoint_format': 'safetensors',\n"
    "                'embedding_local_norm_threshold': 270.0,\n"
    "                'prefix': 'llama3_1_8b',\n"
    "                'type': 'CheckpointMonitor'}],\n"
    " 'monitor_config': {'global_norm_spike_count_threshold': 2,\n"
    "                    'global_norm_spike_threshold': 3.0,\n"
    "                    'monitor_on': True},\n"
    " 'use_skip_data_by_global_norm': True}\n";

// The fixture's worker log under job/output/msrun_log, its thresholds' text replaced by `threshold` and the
// config dump `config` written before it; "" when ../shared is absent.
std::string job_with_worker_log(const TempDir& tmp, const std::string& threshold, const std::string& config = "") {
    const std::string shared = shared_dir();
    if (shared.empty()) return "";
    std::string log = read_file(shared + "/fixtures/mindformers-rendered/worker_0.log");
    log = std::regex_replace(log, std::regex("threshold(:?) 3\\.0"), "threshold$1 " + threshold);
    const std::string out = tmp / "job/output/msrun_log";
    fs::create_directories(out);
    write_file(out + "/worker_0.log", config + log);
    return tmp / "job";
}

std::vector<Json> spikes(const std::string& db) {
    auto r = run({program("msmon"), "anomalies", "--db", db, "--format", "json"});
    std::vector<Json> out;
    if (r.exit_code != 0) return out;
    for (const auto& a : Json::parse(r.out))
        if (a["rule"] == "GlobalNormSpike" || a["rule"] == "EmbeddingNormHigh") out.push_back(a);
    return out;
}

Json thresholds(const std::string& db) {
    auto r = run({program("msmon"), "health", "--db", db, "--format", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Json by_name = Json::object();
    if (r.exit_code != 0) return by_name;
    const Json health = Json::parse(r.out);
    for (const auto& t : health["thresholds"]) by_name[t["name"].get<std::string>()] = t;
    return by_name;
}

// Thresholds 3.0 and 2 from the log itself: its data-skip line (line 15) and its stop line (38). Before, the count
// came from msmon's default (10), and the findings said "1 of 10 consecutive spikes" of a job that stops at the
// second. Findings do not name the source (it depends on the order files are read): health does.
TEST(JobThresholds, the_data_skip_and_stop_lines_give_the_spike_threshold_and_count) {
    TempDir tmp;
    const std::string job = job_with_worker_log(tmp, "3.0");
    if (job.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: rendered MindFormers fixtures not available");
    const std::string db = tmp / "store.db";
    auto ingest = run({program("msmon"), "ingest", job, "--db", db});
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    const auto found = spikes(db);
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0]["step"], 3);
    EXPECT_EQ(found[0]["message"],
              "global norm 47.33 at step 3 is above the threshold 3: spike 1 in a row (with data skip on, MindFormers "
              "skips this step's update and stops the job at its count threshold)");
    EXPECT_EQ(found[1]["step"], 4);
    const Json t = thresholds(db);
    EXPECT_EQ(t["global_norm_spike_threshold"]["value"], 3.0);
    EXPECT_EQ(t["global_norm_spike_threshold"]["source"], "the job's, from msrun_log/worker_0.log line 38");
    EXPECT_EQ(t["global_norm_spike_count_threshold"]["value"], 2.0);
    EXPECT_EQ(t["global_norm_spike_count_threshold"]["source"], "the job's, from msrun_log/worker_0.log line 38");
    EXPECT_TRUE(t["embedding_local_norm_threshold"]["value"].is_null());
    auto table = run({program("msmon"), "health", "--db", db});
    EXPECT_NE(table.out.find("thresholds of MindFormers' checks:\n"
                             "  global_norm_spike_threshold        3        the job's, from msrun_log/worker_0.log "
                             "line 38\n"),
              std::string::npos)
        << table.out;
}

// A job whose data skip is at 50: its 47.3 is no spike (msmon's default of 3 called it one), its 51.2 is. A flag
// overrides the job's value, and health names the flag.
TEST(JobThresholds, the_jobs_threshold_wins_over_the_default_and_a_flag_over_the_job) {
    TempDir tmp;
    const std::string job = job_with_worker_log(tmp, "50.0");
    if (job.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: rendered MindFormers fixtures not available");
    const std::string db = tmp / "store.db";
    ASSERT_EQ(run({program("msmon"), "ingest", job, "--db", db}).exit_code, 0);
    auto found = spikes(db);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0]["step"], 4);
    EXPECT_EQ(found[0]["reference"], 50.0);
    EXPECT_EQ(thresholds(db)["global_norm_spike_threshold"]["source"],
              "the job's, from msrun_log/worker_0.log line 38");

    const std::string flagged = tmp / "flagged.db";
    ASSERT_EQ(run({program("msmon"), "ingest", job, "--db", flagged, "--global-norm-threshold", "45"}).exit_code, 0);
    found = spikes(flagged);
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0]["reference"], 45.0);
    EXPECT_NE(found[0]["message"].get<std::string>().find("above the threshold 45: spike 1 in a row"),
              std::string::npos)
        << found[0]["message"];
    const Json t = thresholds(flagged);
    EXPECT_EQ(t["global_norm_spike_threshold"]["value"], 45.0);
    EXPECT_EQ(t["global_norm_spike_threshold"]["source"], "--global-norm-threshold");
    EXPECT_EQ(t["global_norm_spike_count_threshold"]["source"], "the job's, from msrun_log/worker_0.log line 38");
}

// The config dump the log holds (pprint, no logger prefix) gives the embedding threshold of CheckpointMonitor:
// 313.9 at step 4 is over 270, 260.1 at step 3 is not. Without it, embedding norms were not checked at all.
TEST(JobThresholds, the_pprinted_config_gives_the_embedding_threshold) {
    TempDir tmp;
    const std::string job = job_with_worker_log(tmp, "3.0", kPprintedConfig);
    if (job.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: rendered MindFormers fixtures not available");
    const std::string db = tmp / "store.db";
    ASSERT_EQ(run({program("msmon"), "ingest", job, "--db", db}).exit_code, 0);
    std::vector<Json> embedding;
    for (const auto& a : spikes(db))
        if (a["rule"] == "EmbeddingNormHigh") embedding.push_back(a);
    ASSERT_EQ(embedding.size(), 1u);
    EXPECT_EQ(embedding[0]["step"], 4);
    EXPECT_EQ(embedding[0]["message"],
              "embedding local norm 313.9 at step 4 is at or above the threshold 270: the checkpoint saved at this "
              "step will be marked unhealthy");
    const Json t = thresholds(db);
    EXPECT_EQ(t["embedding_local_norm_threshold"]["value"], 270.0);
    EXPECT_EQ(t["embedding_local_norm_threshold"]["source"], "the job's, from msrun_log/worker_0.log line 3");
    // The stop line is the running check's own value: it is the source named over the config dump.
    EXPECT_EQ(t["global_norm_spike_threshold"]["source"], "the job's, from msrun_log/worker_0.log line 47");
}

// A job without data skip (its log holds no skip, spike or stop line, no config): no spike threshold is guessed.
// MindFormers' default of 3.0 called its global norms of 47.3 and 51.2 spikes whose update "MindFormers skips"; the
// job skipped nothing. Health says the check did not run and why.
TEST(JobThresholds, a_job_without_data_skip_gets_no_spike_findings_from_a_guessed_threshold) {
    TempDir tmp;
    const std::string job = job_with_worker_log(tmp, "3.0");
    if (job.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: rendered MindFormers fixtures not available");
    const std::string log = tmp / "job/output/msrun_log/worker_0.log";
    std::string kept;
    std::istringstream in(read_file(log));
    for (std::string line; std::getline(in, line);)
        if (!std::regex_search(line, std::regex("threshold|^Traceback|^  |^\\[\\.\\.\\.\\]|^ValueError")))
            kept += line + "\n";
    write_file(log, kept);
    const std::string db = tmp / "store.db";
    ASSERT_EQ(run({program("msmon"), "ingest", job, "--db", db}).exit_code, 0);
    EXPECT_TRUE(spikes(db).empty());
    const Json t = thresholds(db);
    EXPECT_TRUE(t["global_norm_spike_threshold"]["value"].is_null());
    EXPECT_EQ(t["global_norm_spike_threshold"]["source"],
              "not checked: no --global-norm-threshold, and no data skip in the job's output");
    // Its global norms are still stored and charted.
    auto q = run({program("msmon"), "query", "--db", db, "--kind", "global_norm"});
    EXPECT_NE(q.out.find("51.204178"), std::string::npos) << q.out;
}

}  // namespace
}  // namespace msmon::test
