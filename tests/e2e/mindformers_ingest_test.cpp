// MindFormers output (info.log, msrun worker logs, health_ckpts.json) through the real `msmon ingest`, `query`
// and `health`.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "store/reader.hpp"
#include "tests/support/e2e_support.hpp"
#include "tests/support/reference_csv.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// rank|kind|name|step|micro → value text, from `msmon query` CSV.
std::map<std::string, std::string> query_map(const std::string& db) {
    auto r = run({program("msmon"), "query", "--db", db});
    std::map<std::string, std::string> out;
    if (r.exit_code != 0) return out;  // no store yet
    auto rows = parse_csv_reference(r.out);
    for (std::size_t i = 1; i < rows.size(); ++i)
        out[rows[i][0] + "|" + rows[i][1] + "|" + rows[i][3] + "|" + rows[i][4] + "|" + rows[i][5]] = rows[i][7];
    return out;
}

// A FIFO planted as health_ckpts.json (another user owns the output folder): a plain open would block until a
// writer came, and with it the whole ingest. It is named as not read; the logs beside it are read.
TEST(MindFormersIngest, a_fifo_named_health_ckpts_json_is_named_and_skipped_not_waited_on) {
    const std::string shared = shared_dir();
    if (shared.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: rendered MindFormers fixtures not available");
    const std::string src = shared + "/fixtures/mindformers-rendered";
    TempDir tmp;
    const std::string out = tmp / "job/output";
    fs::create_directories(out + "/log/rank_7");
    fs::copy_file(src + "/rank_7_info.log", out + "/log/rank_7/info.log");
    ASSERT_EQ(::mkfifo((out + "/health_ckpts.json").c_str(), 0600), 0);
    const std::string db = tmp / "store.db";
    Background ingest({program("msmon"), "ingest", tmp / "job", "--db", db}, tmp.path(),
                      {{"XDG_STATE_HOME", tmp / "state"}});
    ASSERT_EQ(ingest.wait(std::chrono::milliseconds(30000)), 0) << "the ingest waited on the FIFO: " << ingest.err();
    EXPECT_EQ(query_map(db)["7|loss||10|"], "7.123456");
    const std::string log = read_file(tmp / "state/msmon/msmon.log");
    EXPECT_NE(log.find("health_ckpts.json"), std::string::npos) << log;
    EXPECT_NE(log.find("not read: it is a FIFO, not a regular file"), std::string::npos) << log;
}

// A health_ckpts.json of 100 MB (a hostile or broken writer) took 1.05 GB and 11 s to read. Past the bound on a JSON
// document (64 MiB) it is not read, and the issue names the bound and the setting that raises it; a lower bound
// set in msmon's settings applies the same way, and the file read once it fits.
TEST(MindFormersIngest, a_health_file_past_the_json_bound_is_named_with_its_setting_and_not_read) {
    TempDir tmp;
    const std::string out = tmp / "job/output";
    fs::create_directories(out);
    const std::string entry = "{\"is_health\": 1, \"ckpt_name\": \"llama_rank_0-1_1.safetensors\"}";
    {
        std::string big = "[";
        big.reserve(100u << 20);
        while (big.size() < (100u << 20)) big += entry + ",\n";
        big += entry + "]\n";
        write_file(out + "/health_ckpts.json", big);
    }
    auto env = isolated_env(tmp);
    const auto r = run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "a.db", "--json"}, env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::string log = read_file(log_path(tmp));
    EXPECT_NE(log.find("not read: it is larger than 64 MiB (the limit limits.json_document_mib in msmon's settings)"),
              std::string::npos)
        << log.substr(0, 4000);
    // A 2 MB file under a 1 MiB bound set in the settings: named the same way; under a 4 MiB one: read.
    std::string small = "[";
    while (small.size() < (2u << 20)) small += entry + ",\n";
    write_file(out + "/health_ckpts.json", small + entry + "]\n");
    write_file(tmp / "settings.toml", "[limits]\njson_document_mib = 1\n");
    env["MSMON_CONFIG"] = tmp / "settings.toml";
    auto again = run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "b.db"}, env);
    ASSERT_EQ(again.exit_code, 0) << again.err;
    log = read_file(log_path(tmp));
    EXPECT_NE(log.find("not read: it is larger than 1 MiB (the limit limits.json_document_mib"), std::string::npos);
    write_file(tmp / "settings.toml", "[limits]\njson_document_mib = 4\n");
    again = run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "c.db", "--json"}, env);
    ASSERT_EQ(again.exit_code, 0) << again.err;
    const auto health = run({program("msmon"), "health", "--db", tmp / "c.db", "--format", "json"}, env);
    ASSERT_EQ(health.exit_code, 0) << health.err;
    EXPECT_NE(health.out.find("llama_rank_0-1_1.safetensors"), std::string::npos) << health.out.substr(0, 2000);
}

TEST(MindFormersIngest, rendered_fixture_lands_as_the_spec_says) {
    const std::string shared = shared_dir();
    if (shared.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: rendered MindFormers fixtures not available");
    const std::string src = shared + "/fixtures/mindformers-rendered";
    TempDir tmp;
    const std::string out = tmp / "job/output";
    fs::create_directories(out + "/log/rank_7");
    fs::create_directories(out + "/msrun_log");
    fs::copy_file(src + "/rank_7_info.log", out + "/log/rank_7/info.log");
    fs::copy_file(src + "/worker_0.log", out + "/msrun_log/worker_0.log");
    fs::copy_file(src + "/health_ckpts.json", out + "/health_ckpts.json");
    const std::string db = tmp / "store.db";
    auto ingest =
        run({program("msmon"), "ingest", tmp / "job", "--db", db, "--json"}, {{"XDG_STATE_HOME", tmp / "state"}});
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    EXPECT_NE(ingest.out.find("\"errors\": 0"), std::string::npos) << ingest.out;

    const auto v = query_map(db);
    const std::map<std::string, std::string> expected = {
        // info.log of rank 7, step 10: the step line, progress and every TrainingStateMonitor metric.
        {"7|loss||10|", "7.123456"},
        {"7|per_step_time||10|", "1752"},
        {"7|lr||10|", "9.981987e-06"},
        {"7|overflow||10|", "0"},
        {"7|loss_scale||10|", "1"},
        {"7|global_norm||10|", "1.5083363"},
        {"7|throughput||10|", "170.738"},
        {"7|samples_per_second||10|", "1.14155"},
        {"7|local_norm|model.layers.0.attention.wq.weight|10|", "0.01873346"},
        {"7|local_norm|model.layers.0.feed_forward.w1.weight|10|", "0.04112874"},
        {"7|local_norm|model.layers.0.attention_norm.weight|10|", "0.0007215"},
        {"7|device_local_norm||10|", "1.3920451"},
        {"7|local_loss|lm|10|0", "7.135756"},
        {"7|local_loss|lm|10|1", "7.111556"},
        {"7|adam_m_norm|model.layers.0.attention.wq.weight|10|", "0.00215328112244606"},
        {"7|adam_v_norm|model.layers.0.attention.wq.weight|10|", "3.1852999882175936e-07"},
        {"7|weight_norm||10|", "1203.8817138671875"},
        {"7|throughput_linearity||10|", "0.9926543577526307"},
        {"7|device_accum_local_loss|lm|10|", "14.247312"},
        // worker_0.log of rank 0 (pipeline stage 0): global norm and embedding norm per step, but loss 0 is not a loss.
        {"0|global_norm||3|", "47.329006"},
        {"0|global_norm||4|", "51.204178"},
        {"0|embedding_local_norm||3|", "260.10452"},
        {"0|embedding_local_norm||4|", "313.8564"},
        {"0|throughput||3|", "62.178"},
        {"0|per_step_time||4|", "7629"},
    };
    for (const auto& [key, value] : expected) {
        auto it = v.find(key);
        ASSERT_NE(it, v.end()) << "missing " << key;
        EXPECT_EQ(it->second, value) << key;
    }
    EXPECT_EQ(v.count("0|loss||3|"), 0u) << "a non-last pipeline stage's loss 0.000000 was stored as a loss";
    EXPECT_EQ(v.count("0|loss||4|"), 0u);

    auto health = run({program("msmon"), "health", "--db", db, "--format", "json"});
    ASSERT_EQ(health.exit_code, 0) << health.err;
    const Json h = Json::parse(health.out);
    ASSERT_EQ(h["checkpoints"].size(), 4u);
    int unhealthy = 0;
    for (const auto& c : h["checkpoints"]) unhealthy += c["healthy"] == false;
    EXPECT_EQ(unhealthy, 2);
    EXPECT_EQ(h["latest_healthy"], "llama3_1_8b_rank_0-3_1.safetensors");
    std::map<std::string, int> kinds;
    for (const auto& e : h["events"]) ++kinds[e["kind"].get<std::string>()];
    EXPECT_EQ(kinds["data_skip"], 2);
    EXPECT_EQ(kinds["global_norm_spike"], 1);
    EXPECT_EQ(kinds["stop"], 1);
    EXPECT_EQ(kinds["checkpoint_saved"], 2);
    bool stop_text = false;
    for (const auto& e : h["events"])
        if (e["kind"] == "stop")
            stop_text = e["step"] == 4 &&
                        e["message"].get<std::string>().find("ValueError: Current global norm [51.204178] of step 4") !=
                            std::string::npos;
    EXPECT_TRUE(stop_text) << h["events"].dump();
}

const std::string kPrefix =
    "[INFO] 2026-07-24 14:20:06,869 [mindformers/core/callback/callback.py:747] print_output_info: ";
const std::string kTsm = "[INFO] 2026-07-24 14:20:06,872 [mindformers/core/callback/callback.py:1496] _to_log: ";

std::string step_line(int step, const std::string& loss, const std::string& gnorm) {
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "{ Epoch:[  1/  2], step:[%5d/ 6500], loss: %s, per_step_time: 1752ms, lr: 9.981987e-06, overflow "
                  "cond: False, loss_scale: 1.0, global_norm: [%s], train_throughput_per_npu: 170.738T\n",
                  step, loss.c_str(), gnorm.c_str());
    return kPrefix + buf;
}

TEST(MindFormersIngest, restarts_rotation_tracebacks_and_bad_lines_from_bytes_written_here) {
    TempDir tmp;
    const std::string out = tmp / "job/output";
    fs::create_directories(out + "/log/rank_0");
    fs::create_directories(out + "/msrun_log");
    const std::string info = out + "/log/rank_0/info.log", worker = out + "/msrun_log/worker_0.log";
    // An older rotated segment, then the current file with a restart appended to it.
    write_file(info + ".1", step_line(1, "9.500000", "2.5") + step_line(2, "9.250000", "2.25"));
    write_file(info, step_line(3, "9.000000", "2.0") + kPrefix.substr(0, kPrefix.find("print_output_info")) +
                         "run_mindformer.py:69] <module>: Running MindFormers in GRAPH_MODE.\n" +
                         step_line(3, "8.900000", "1.9") + kTsm +
                         "Epoch:[  1/  2], step:[    3/ 6500] micro_local_lm_loss: [8.5]\n" + kTsm +
                         "Epoch:[  1/  2], step:[    3/ 6500] micro_local_lm_loss: [8.25]\n" + kPrefix +
                         "{ Epoch:[  1/  2], step:[    4/ 6500], loss: garbage\n");
    // A traceback written in two parts: nothing until its exception line arrives.
    write_file(worker, "Traceback (most recent call last):\n  File \"run_mindformer.py\", line 354, in <module>\n");
    write_file(out + "/health_ckpts.json", "[\n    {\n        \"is_health\": 0,\n");  // caught mid-write
    const std::string db = tmp / "store.db";
    Background follow({program("msmon"), "ingest", tmp / "job", "--follow", "--db", db, "--json"}, tmp.path(),
                      {{"XDG_STATE_HOME", tmp / "state"}});
    ASSERT_GE(wait_until([&] { return query_map(db).count("0|loss||3|"); }, std::chrono::milliseconds(5000)).count(),
              0);
    // msmon has read the traceback's first part: worker_0.log is in the store, read up to the traceback, which waits
    // for its exception line. The cut health_ckpts.json was there from the start, like info.log.
    auto worker_read = [&] {
        std::string error;
        return sqlite_rows(db, "SELECT offset FROM file WHERE path LIKE '%/msrun_log/worker_0.log'", error).size() == 1;
    };
    ASSERT_GE(wait_until(worker_read, std::chrono::milliseconds(5000)).count(), 0) << follow.err();
    append_file(worker, "    raise RuntimeError(\"device lost\")\nRuntimeError: device lost\n");
    write_file(out + "/health_ckpts.json",
               "[\n    {\n        \"is_health\": 0,\n        \"ckpt_name\": \"m_rank_0-3_1.safetensors\"\n    }\n]");
    auto health_has_error = [&] {
        auto h = run({program("msmon"), "health", "--db", db, "--format", "json"});
        if (h.exit_code != 0) return false;
        const Json j = Json::parse(h.out);
        bool err = false;
        for (const auto& e : j["events"])
            err = err || (e["kind"] == "error" &&
                          e["message"].get<std::string>().find("RuntimeError: device lost") != std::string::npos);
        return err && j["checkpoints"].size() == 1 && j["latest_healthy"] == "m_rank_0-3_1.safetensors";
    };
    EXPECT_GE(wait_until(health_has_error, std::chrono::milliseconds(5000)).count(), 0);
    follow.signal(SIGTERM);
    ASSERT_EQ(follow.wait(std::chrono::milliseconds(5000)), 0);
    const Json summary = Json::parse(follow.out());
    EXPECT_EQ(summary["errors"], 1) << "exactly the garbage step line is malformed: " << follow.out();

    const auto v = query_map(db);
    EXPECT_EQ(v.at("0|loss||1|"), "9.5");  // from the rotated segment
    EXPECT_EQ(v.at("0|loss||2|"), "9.25");
    EXPECT_EQ(v.at("0|loss||3|"), "8.9");  // after the restart the later value of step 3 wins
    EXPECT_EQ(v.at("0|local_loss|lm|3|0"), "8.5");
    EXPECT_EQ(v.at("0|local_loss|lm|3|1"), "8.25");
    const std::string log = read_file(tmp / "state/msmon/msmon.log");
    EXPECT_NE(log.find("info.log:6: unrecognised step or metric line"), std::string::npos) << log;
}

// A rotated log is never read twice: renamed while msmon was stopped (Python's RotatingFileHandler: info.log ->
// info.log.1, a new info.log), or copied and truncated while it follows (logrotate's copytruncate). Before, the
// segment was read again from byte 0: its start event was stored twice and Health showed a relaunch that never
// happened.
std::map<std::string, int> event_kinds(const std::string& db) {
    auto h = run({program("msmon"), "health", "--db", db, "--format", "json"});
    std::map<std::string, int> kinds;
    EXPECT_EQ(h.exit_code, 0) << h.err;
    if (h.exit_code != 0) return kinds;
    const Json doc = Json::parse(h.out);
    for (const auto& e : doc["events"]) ++kinds[e["kind"].get<std::string>()];
    return kinds;
}

const std::string kStart =
    "[INFO] 2026-07-24 14:20:00,000 [mindformers/run_mindformer.py:69] <module>: Running MindFormers in GRAPH_MODE.\n";

TEST(MindFormersIngest, a_log_renamed_while_msmon_was_stopped_is_not_read_again) {
    TempDir tmp;
    const std::string dir = tmp / "job/output/log/rank_0", db = tmp / "store.db";
    fs::create_directories(dir);
    write_file(dir + "/info.log", kStart + step_line(1, "9.500000", "2.5") + step_line(2, "9.250000", "2.25"));
    ASSERT_EQ(run({program("msmon"), "ingest", tmp / "job", "--db", db}).exit_code, 0);
    EXPECT_EQ(event_kinds(db)["start"], 1);
    fs::rename(dir + "/info.log", dir + "/info.log.1");
    write_file(dir + "/info.log", step_line(3, "9.000000", "2.0"));
    auto again = run({program("msmon"), "ingest", tmp / "job", "--db", db});
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(event_kinds(db)["start"], 1) << "the renamed segment was read again";
    const auto v = query_map(db);
    EXPECT_EQ(v.at("0|loss||1|"), "9.5");
    EXPECT_EQ(v.at("0|loss||3|"), "9");
}

TEST(MindFormersIngest, a_log_copied_and_truncated_while_followed_is_not_read_again) {
    TempDir tmp;
    const std::string dir = tmp / "job/output/log/rank_0", db = tmp / "store.db";
    fs::create_directories(dir);
    const std::string first = kStart + step_line(1, "9.500000", "2.5") + step_line(2, "9.250000", "2.25");
    write_file(dir + "/info.log", first);
    Background follow({program("msmon"), "ingest", tmp / "job", "--follow", "--db", db}, tmp.path(),
                      {{"XDG_STATE_HOME", tmp / "state"}});
    ASSERT_GE(wait_until([&] { return query_map(db).count("0|loss||2|"); }, std::chrono::milliseconds(5000)).count(),
              0);
    write_file(dir + "/info.log.1", first);  // cp info.log info.log.1
    write_file(dir + "/info.log", "");       // : > info.log
    append_file(dir + "/info.log", step_line(3, "9.000000", "2.0"));
    ASSERT_GE(wait_until([&] { return query_map(db).count("0|loss||3|"); }, std::chrono::milliseconds(5000)).count(),
              0);
    // msmon has looked at the copy, and says it holds what was read of info.log.
    EXPECT_GE(wait_until([&] { return follow.err().find("info.log.1' holds what was read of") != std::string::npos; },
                         std::chrono::milliseconds(5000))
                  .count(),
              0)
        << follow.err();
    follow.signal(SIGTERM);
    ASSERT_EQ(follow.wait(std::chrono::milliseconds(5000)), 0);
    EXPECT_EQ(event_kinds(db)["start"], 1) << "the copy was read again; msmon's stderr: " << follow.err();
}

}  // namespace
}  // namespace msmon::test

namespace msmon::test {
namespace {

class SimulatedMindFormers : public ::testing::TestWithParam<std::string> {};

TEST_P(SimulatedMindFormers, rotation_restart_and_stop_ingest_with_no_malformed_line) {
    TempDir tmp;
    const std::string job = tmp / "job", db = tmp / "store.db";
    auto sim = run({program("msmon"),
                    "simulate",
                    job,
                    "--ranks",
                    "4",
                    "--steps",
                    "40",
                    "--params",
                    "4",
                    "--logs",
                    "--health",
                    "--log-variant",
                    GetParam(),
                    "--log-max-bytes",
                    "6000",
                    "--restart-at",
                    "15",
                    "--ckpt-every",
                    "5",
                    "--faults",
                    "spike@8,stop@30"});
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    EXPECT_FALSE(find_files(job + "/output/log/rank_0", ".log.1").empty()) << "no rotation happened";
    auto ingest = run({program("msmon"), "ingest", job, "--db", db, "--json"}, {{"XDG_STATE_HOME", tmp / "state"}});
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    const Json summary = Json::parse(ingest.out);
    EXPECT_EQ(summary["errors"], 0) << read_file(tmp / "state/msmon/msmon.log");

    // Every step of the job has a step time on every rank, across rotated segments and the restart (every
    // variant prints per_step_time; noclip has no global norm).
    const auto v = query_map(db);
    for (int rank = 0; rank < 4; ++rank)
        for (int step = 1; step <= 30; ++step)
            EXPECT_TRUE(v.count(std::to_string(rank) + "|per_step_time||" + std::to_string(step) + "|"))
                << "rank " << rank << " step " << step;
    auto health = run({program("msmon"), "health", "--db", db, "--format", "json"});
    ASSERT_EQ(health.exit_code, 0);
    const Json h = Json::parse(health.out);
    std::map<std::string, int> kinds;
    for (const auto& e : h["events"]) ++kinds[e["kind"].get<std::string>()];
    EXPECT_GE(kinds["start"], 2) << "the restart's startup markers are events";
    EXPECT_GE(kinds["data_skip"], 1);
    EXPECT_GE(kinds["stop"], 1);
    EXPECT_GE(h["checkpoints"].size(), 3u);
}

INSTANTIATE_TEST_SUITE_P(Variants, SimulatedMindFormers,
                         ::testing::Values("standard", "nonsink", "nolr", "noclip", "moe", "old3"));

// Each step line's own time (the node's local time) is when that step ended: the Chart's wall-clock axis.
TEST(MindFormersIngest, step_lines_give_each_step_its_time) {
    TempDir tmp;
    const std::string out = tmp / "job/output";
    fs::create_directories(out + "/log/rank_0");
    auto line_at = [](int step, const char* time) {
        std::string l = step_line(step, "9.0", "1.0");
        return l.replace(l.find("2026-07-24 14:20:06,869"), 23, time);
    };
    write_file(out + "/log/rank_0/info.log", line_at(1, "2026-07-24 14:20:06,869") +
                                                 line_at(2, "2026-07-24 14:20:08,621") +
                                                 line_at(3, "2026-07-24 14:21:10,000"));
    auto env = isolated_env(tmp);
    env["TZ"] = "UTC";
    const auto r = run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "s.db"}, env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto times = open_sqlite_reader(tmp / "s.db")->step_times();
    ASSERT_EQ(times.size(), 3u);
    EXPECT_EQ(times[0].step, 1);
    EXPECT_EQ(times[0].wall_ms, 1784902806869);  // 2026-07-24 14:20:06.869 UTC
    EXPECT_EQ(times[1].wall_ms - times[0].wall_ms, 1752);
    EXPECT_EQ(times[2].wall_ms - times[1].wall_ms, 61379);
}

}  // namespace
}  // namespace msmon::test

namespace msmon::test {
namespace {

// A relaunch appended to the same info.log, resumed from the step-4 checkpoint after step 6: its lines are a run
// of their own, so steps 5-6 keep both trainings, the later one counting. A rotation later starts a new info.log
// in the middle of the relaunch (no start line in it): its steps still belong to the relaunch.
TEST(MindFormersIngest, a_relaunch_in_the_same_log_is_a_segment_of_its_own) {
    TempDir tmp;
    const std::string dir = tmp / "job/output/log/rank_0", db = tmp / "s.db";
    fs::create_directories(dir);
    auto at = [](const std::string& time, std::string line) { return line.replace(7, 23, time); };  // "[INFO] <time>"
    auto start = [&](const std::string& time) { return at(time, kStart); };
    std::string first = start("2026-07-24 14:20:06,869");
    for (int s = 1; s <= 6; ++s)
        first += at("2026-07-24 14:21:0" + std::to_string(s) + ",000", step_line(s, "9." + std::to_string(s), "2.0"));
    std::string relaunch = start("2026-07-24 14:30:00,000");
    for (int s = 5; s <= 8; ++s)
        relaunch +=
            at("2026-07-24 14:31:0" + std::to_string(s) + ",000", step_line(s, "8." + std::to_string(s), "1.5"));
    write_file(dir + "/info.log", first + relaunch);
    auto env = isolated_env(tmp);
    env["TZ"] = "UTC";
    ASSERT_EQ(run({program("msmon"), "ingest", tmp / "job", "--db", db}, env).exit_code, 0);
    // RotatingFileHandler rolls over; the new info.log goes on with the relaunch's steps 9-10.
    fs::rename(dir + "/info.log", dir + "/info.log.1");
    write_file(dir + "/info.log", at("2026-07-24 14:31:09,000", step_line(9, "8.9", "1.5")) +
                                      at("2026-07-24 14:31:10,000", step_line(10, "8.1", "1.5")));
    ASSERT_EQ(run({program("msmon"), "ingest", tmp / "job", "--db", db}, env).exit_code, 0);

    auto loss = [&](std::vector<std::string> extra) {
        std::vector<std::string> argv = {program("msmon"), "query", "--db", db, "--kind", "loss"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        const auto r = run(argv, env);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        std::vector<std::string> out;
        const auto rows = parse_csv_reference(r.out);
        for (std::size_t i = 1; i < rows.size(); ++i) out.push_back(rows[i][4] + "=" + rows[i][7]);
        return out;
    };
    EXPECT_EQ(loss({}), (std::vector<std::string>{"1=9.1", "2=9.2", "3=9.3", "4=9.4", "5=8.5", "6=8.6", "7=8.7",
                                                  "8=8.8", "9=8.9", "10=8.1"}));
    EXPECT_EQ(loss({"--all-runs"}), (std::vector<std::string>{"1=9.1", "2=9.2", "3=9.3", "4=9.4", "5=9.5", "6=9.6",
                                                              "5=8.5", "6=8.6", "7=8.7", "8=8.8", "9=8.9", "10=8.1"}));
    const auto h = run({program("msmon"), "health", "--db", db, "--format", "json"}, env);
    ASSERT_EQ(h.exit_code, 0) << h.err;
    const Json j = Json::parse(h.out);
    ASSERT_EQ(j["restarts"].size(), 1u) << h.out;
    EXPECT_EQ(j["restarts"][0]["source"], "runs");
    EXPECT_EQ(j["restarts"][0]["resumed_at"], 5);
    EXPECT_EQ(j["restarts"][0]["reached"], 6);
    const auto text = run({program("msmon"), "health", "--db", db}, env);
    EXPECT_NE(text.out.find("restart 1 at 2026-07-24 14:30:00,000: rank 0 resumed at step 5 after step 6 (steps 5-6 "
                            "trained twice)"),
              std::string::npos)
        << text.out;
}

// The relaunch also writes a new TensorBoard event file: it is placed with the relaunch by its first event's wall
// time, so a series only TensorBoard has (expert load) goes on past the restart instead of being taken for the
// abandoned stretch of the first launch.
TEST(MindFormersIngest, a_relaunchs_event_file_belongs_to_the_relaunch) {
    TempDir tmp;
    const auto sim = run({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--steps", "60", "--params", "4",
                          "--logs", "--tensorboard", "--restart-at", "45"});
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    const std::string db = tmp / "s.db";
    ASSERT_EQ(run({program("msmon"), "ingest", tmp / "job", "--db", db}).exit_code, 0);
    auto rows = [&](const std::string& kind, const std::string& steps, bool all) {
        std::vector<std::string> argv = {program("msmon"), "query", "--db",    db,   "--kind", kind,
                                         "--rank",         "0",     "--steps", steps};
        if (all) argv.push_back("--all-runs");
        const auto r = run(argv);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return parse_csv_reference(r.out).size() - 1;
    };
    EXPECT_EQ(rows("expert_load", "50", false), 16u) << "2 layers x 8 experts at step 50, after the restart";
    EXPECT_EQ(rows("expert_load", "44", false), 16u);
    EXPECT_EQ(rows("expert_load", "44", true), 32u) << "step 44 was trained twice";
    EXPECT_EQ(rows("global_norm", "44", false), 1u);
    EXPECT_EQ(rows("global_norm", "44", true), 2u);
    const auto h = run({program("msmon"), "health", "--db", db, "--format", "json"});
    const Json j = Json::parse(h.out);
    ASSERT_EQ(j["restarts"].size(), 1u) << h.out;
    EXPECT_EQ(j["restarts"][0]["resumed_at"], 41);
    EXPECT_EQ(j["restarts"][0]["reached"], 45) << "not the samples axis of TensorBoard's 'vs samples' twins";
}

}  // namespace
}  // namespace msmon::test
