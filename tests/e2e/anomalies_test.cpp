// `msmon anomalies` on msprobe's real alert fixture and on simulated runs with a planted bad rank among 64.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

using Json = nlohmann::json;

Json anomalies_json(const std::string& db, std::vector<std::string> extra) {
    std::vector<std::string> argv = {program("msmon"), "anomalies", "--db", db, "--format", "json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto r = run(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return Json::parse(r.out);
}

std::vector<std::string> keys_of(const Json& list) {
    std::vector<std::string> out;
    for (const auto& a : list) out.push_back(a.value("key", ""));
    return out;
}

// How many ranks have grad_reduced norms of `step` in the store at `db` (0 while there is no store).
std::size_t ranks_at_step(const std::string& db, std::size_t step) {
    std::string error;
    std::set<std::string> ranks;
    for (const auto& row :
         query_rows(db, {"--kind", "grad_reduced", "--op", "norm", "--steps", std::to_string(step)}, {}, error))
        ranks.insert(row.rank);
    return ranks.size();
}

std::vector<std::string> keys_of_file(const std::string& path) {
    std::vector<std::string> out;
    const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(read_file(path));
    for (auto it = doc.begin(); it != doc.end(); ++it) out.push_back(it.key());
    return out;
}

class AlertFixture : public ::testing::Test {
protected:
    void SetUp() override {
        shared_ = shared_dir();
        if (shared_.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: real msprobe fixtures not available");
        fixture_ = shared_ + "/fixtures/msprobe-real/alert";
        db_ = tmp_ / "store.db";
        auto r = run({program("msmon"), "ingest", fixture_, "--db", db_, "--monitor-config", fixture_ + "/config.json"},
                     {{"XDG_STATE_HOME", tmp_ / "state"}});
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    TempDir tmp_;
    std::string shared_, fixture_, db_;
};

TEST_F(AlertFixture, msprobe_source_holds_every_dumped_entry) {
    const Json all = anomalies_json(db_, {"--source", "msprobe"});
    EXPECT_EQ(all.size(), 771u);
    std::set<std::string> keys;
    for (const auto& a : all) {
        keys.insert(a["key"].get<std::string>());
        for (const char* field : {"source", "rule", "rank", "step", "micro_step", "kind", "name", "op", "value",
                                  "message", "tag_name", "key", "call_id", "pp_stage", "vpp_stage", "group_mates"})
            ASSERT_TRUE(a.contains(field)) << field;
    }
    const auto dumped = keys_of_file(fixture_ + "/monitor_output/anomaly_detected/rank0/anomaly.json");
    EXPECT_EQ(keys, std::set<std::string>(dumped.begin(), dumped.end()));
}

TEST_F(AlertFixture, topk_lists_the_keys_in_msprobe_analyser_order) {
    EXPECT_EQ(keys_of(anomalies_json(db_, {"--source", "msprobe", "--topk", "8"})),
              keys_of_file(fixture_ + "/monitor_output/anomaly_detected/anomaly_analyse.json"));
    EXPECT_EQ(keys_of(anomalies_json(db_, {"--source", "msprobe", "--topk", "20", "--steps", "12,20"})),
              keys_of_file(fixture_ + "/anomaly_analyse_steps_12_20_top20/anomaly_analyse.json"));
}

TEST_F(AlertFixture, msprobe_compatible_detection_flags_exactly_what_msprobe_printed) {
    using Key = std::tuple<std::string, std::string, std::string, std::int64_t>;
    std::set<Key> printed, detected;
    const std::regex re(R"(Rule (\w+) reports anomaly signal in \('([^']*)', '([^']*)'\) at step (\d+))");
    std::ifstream console(fixture_ + "/console.log");
    for (std::string line; std::getline(console, line);) {
        std::smatch m;
        if (std::regex_search(line, m, re)) printed.insert({m[1], m[2], m[3], std::stoll(m[4])});
    }
    for (const auto& a : anomalies_json(db_, {"--source", "detected"}))
        if (a["rule"] == "AnomalyTurbulence" || a["rule"] == "AnomalyNan")
            detected.insert({a["rule"], a["tag_name"], a["op"], a["step"].get<std::int64_t>()});
    std::vector<Key> missing, extra;
    std::set_difference(printed.begin(), printed.end(), detected.begin(), detected.end(), std::back_inserter(missing));
    std::set_difference(detected.begin(), detected.end(), printed.begin(), printed.end(), std::back_inserter(extra));
    EXPECT_GT(printed.size(), 1000u);
    EXPECT_TRUE(missing.empty()) << missing.size() << " printed by msprobe, not detected; first: "
                                 << (missing.empty() ? "" : std::get<1>(missing[0]) + " " + std::get<2>(missing[0]));
    EXPECT_TRUE(extra.empty()) << extra.size() << " detected, not printed by msprobe; first: "
                               << (extra.empty() ? "" : std::get<1>(extra[0]) + " " + std::get<2>(extra[0]));
}

// With alert.dump false (msprobe's default) the alerts exist only as the trainer's console lines, which a
// MindFormers job keeps in its worker logs: they are msprobe's anomalies all the same. A dump that appears later
// (alert.dump turned on) takes each alert's row rather than adding a second one.
TEST_F(AlertFixture, alerts_that_exist_only_as_console_lines_in_a_worker_log_are_msprobe_anomalies) {
    namespace fs = std::filesystem;
    using Key = std::tuple<std::string, std::string, std::string, std::int64_t>;
    std::set<Key> printed;
    const std::regex re(R"(Rule (\w+) reports anomaly signal in \('([^']*)', '([^']*)'\) at step (\d+))");
    std::ifstream console(fixture_ + "/console.log");
    for (std::string line; std::getline(console, line);) {
        std::smatch m;
        if (std::regex_search(line, m, re)) printed.insert({m[1], m[2], m[3], std::stoll(m[4])});
    }
    ASSERT_GT(printed.size(), 1000u);
    const std::string job = tmp_ / "job";
    fs::create_directories(job + "/monitor_output");
    for (const auto& e : fs::directory_iterator(fixture_ + "/monitor_output"))
        if (e.path().filename() != "anomaly_detected")
            fs::copy(e.path(), job + "/monitor_output/" + e.path().filename().string(), fs::copy_options::recursive);
    fs::create_directories(job + "/output/msrun_log");
    fs::copy_file(fixture_ + "/console.log", job + "/output/msrun_log/worker_0.log");
    const std::string db = tmp_ / "console.db";
    const auto env = isolated_env(tmp_);
    ASSERT_EQ(run({program("msmon"), "ingest", job, "--db", db}, env).exit_code, 0);
    auto stored = [&] {
        std::set<Key> out;
        for (const auto& a : anomalies_json(db, {"--source", "msprobe"}))
            out.insert({a["rule"], a["tag_name"], a["op"], a["step"].get<std::int64_t>()});
        return out;
    };
    EXPECT_TRUE(stored() == printed) << stored().size() << " stored, " << printed.size() << " printed";
    const Json first = anomalies_json(db, {"--source", "msprobe", "--topk", "1"});
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(first[0]["key"], "console");
    EXPECT_EQ(first[0]["message"].get<std::string>().find('\x1b'), std::string::npos) << "colour escapes kept";

    // The dump appears: its 771 entries take their alerts' rows; nothing is stored twice.
    fs::copy(fixture_ + "/monitor_output/anomaly_detected", job + "/monitor_output/anomaly_detected",
             fs::copy_options::recursive);
    ASSERT_EQ(run({program("msmon"), "ingest", job, "--db", db}, env).exit_code, 0);
    const Json all = anomalies_json(db, {"--source", "msprobe"});
    EXPECT_EQ(all.size(), printed.size());
    std::size_t from_dump = 0;
    for (const auto& a : all) from_dump += a["key"] != "console";
    EXPECT_EQ(from_dump, 771u);
    // And the other way round: a dump read first, its console lines after add only the alerts the dump lost.
    const std::string db2 = tmp_ / "dump_first.db";
    fs::rename(job + "/output", tmp_ / "later_output");
    ASSERT_EQ(run({program("msmon"), "ingest", job, "--db", db2}, env).exit_code, 0);
    EXPECT_EQ(anomalies_json(db2, {"--source", "msprobe"}).size(), 771u);
    fs::rename(tmp_ / "later_output", job + "/output");
    ASSERT_EQ(run({program("msmon"), "ingest", job, "--db", db2}, env).exit_code, 0);
    EXPECT_EQ(anomalies_json(db2, {"--source", "msprobe"}).size(), printed.size());
}

TEST_F(AlertFixture, default_ranking_lists_the_planted_nan_and_spike_first) {
    // msprobe's rules fire on near-zero means at most steps: each of those steps is an incident of its own, and
    // the two planted events are the two most severe, each led by where it began.
    const Json top = anomalies_json(db_, {"--topk", "2"});
    ASSERT_EQ(top.size(), 2u);
    EXPECT_EQ(top[0]["step"], 20);
    EXPECT_EQ(top[0]["kind"], "grad_reduced");  // the NaN was written into the gradient after backward
    EXPECT_EQ(top[0]["name"], "layers.1.fc1.weight");
    EXPECT_EQ(top[1]["step"], 12);
    EXPECT_EQ(top[1]["kind"], "actv_grad") << "loss x100: the backward pass shows it first, at the output";
    EXPECT_EQ(top[1]["name"], ".output");
    for (const auto& a : top) EXPECT_EQ(a["origin"], true) << a.dump();
    const Json incidents = anomalies_json(db_, {"--incidents", "--topk", "2"});
    ASSERT_EQ(incidents.size(), 2u);
    EXPECT_EQ(incidents[0]["step"], 20);
    EXPECT_EQ(incidents[1]["step"], 12);
    EXPECT_GT(incidents[1]["anomalies"].get<int>(), 50) << "every tensor of the spike step is in one incident";
}

// What a person reads: "1 incident", not "1 incidents"; numbers in messages as the tables show them (4 significant
// digits, more only where two compared numbers would read the same); --format csv with every field of the JSON.
TEST(AnomalyText, one_incident_reads_singular_messages_use_short_numbers_and_csv_has_every_field) {
    const std::string shared = shared_dir();
    if (shared.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the msprobe-faults runs are not available");
    TempDir tmp;
    const std::map<std::string, std::string> env = {{"XDG_STATE_HOME", tmp / "state"}};
    for (const char* run_name : {"sdc-weight", "baddata"}) {
        const std::string db = tmp / (std::string(run_name) + ".db");
        ASSERT_EQ(run({program("msmon"), "ingest", shared + "/fixtures/msprobe-faults/" + run_name, "--db", db}, env)
                      .exit_code,
                  0);
        const Json list = anomalies_json(db, {});
        ASSERT_FALSE(list.empty());
        // No number in a message has more than 6 significant digits (11.709072680814934 was written whole).
        const std::regex decimal(R"([0-9]+\.[0-9]+)");
        for (const auto& a : list) {
            const std::string message = a["message"].get<std::string>();
            for (std::sregex_iterator it(message.begin(), message.end(), decimal), end; it != end; ++it) {
                std::string digits = it->str();
                digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
                digits.erase(0, digits.find_first_not_of('0'));
                EXPECT_LE(digits.size(), 6u) << it->str() << " in " << message;
            }
        }
        // CSV: a header of every JSON field, one line per anomaly, the same values.
        auto csv = run({program("msmon"), "anomalies", "--db", db, "--format", "csv"});
        ASSERT_EQ(csv.exit_code, 0) << csv.err;
        std::vector<std::string> lines;
        std::istringstream in(csv.out);
        for (std::string l; std::getline(in, l);) lines.push_back(l);
        ASSERT_EQ(lines.size(), list.size() + 1);
        for (const char* field : {"source", "rule", "rank", "step", "kind", "name", "op", "value", "reference",
                                  "message", "score", "incident", "origin"})
            EXPECT_NE(lines[0].find(field), std::string::npos) << field << " not in " << lines[0];
        EXPECT_EQ(lines[1].rfind("detected," + list[0]["rule"].get<std::string>() + ",", 0), 0u) << lines[1];
    }
    // sdc-weight is one incident.
    const std::string db = tmp / "sdc-weight.db";
    auto table = run({program("msmon"), "anomalies", "--db", db});
    EXPECT_NE(table.out.find("of 3 anomalies in 1 incident (* marks where it began)"), std::string::npos) << table.out;
    auto incidents = run({program("msmon"), "anomalies", "--db", db, "--incidents"});
    EXPECT_NE(incidents.out.find("1 of 1 incident (3 anomalies)"), std::string::npos) << incidents.out;
    auto csv = run({program("msmon"), "anomalies", "--db", db, "--incidents", "--format", "csv"});
    EXPECT_EQ(csv.out.rfind("incident,score,step,rank,kind,name,op,rule,source,anomalies,ranks,", 0), 0u) << csv.out;
}

// An anomaly dump in the form earlier msprobe versions wrote (msprobe's docs still show it): the message ends at
// the step, and the tag names the activation's side (input_grad). Its rule, op and series are those of the CSVs,
// so the row leads to its chart.
TEST(AnomalyDump, an_entry_in_the_earlier_form_names_a_series_the_store_holds) {
    TempDir tmp;
    const std::string out = tmp / "job/monitor_output";
    const std::string run_dir = out + "/Nov22_13-55-47-rank0-426b92d1";
    std::filesystem::create_directories(run_dir);
    std::filesystem::create_directories(out + "/anomaly_detected/rank0");
    write_file(run_dir + "/actv_grad_0-1.csv",
               "vpp_stage,name,step,micro_step,min,max,norm\n"
               "0,1.self_attention.core_attention_flash_0.input,0,0,-0.5,0.5,1.0\n"
               "0,1.self_attention.core_attention_flash_0.input,1,0,-40.0,0.5,41.0\n");
    write_file(out + "/anomaly_detected/rank0/anomaly.json", R"({
 "0:1.self_attention.core_attention_flash_0/rank0/input_grad_min_step1": {
  "rank": 0, "step": 1, "micro_step": 0, "pp_stage": 0, "vpp_stage": 0, "call_id": 0,
  "tag_name": "0:1.self_attention.core_attention_flash_0/rank0/input_grad",
  "message": "Rule AnomalyTurbulence reports anomaly signal in ('0:1.self_attention.core_attention_flash_0/rank0/input_grad', 'min') at step 1.",
  "group_mates": [0]
 }
})");
    const std::string db = tmp / "store.db";
    ASSERT_EQ(run({program("msmon"), "ingest", tmp / "job", "--db", db}, isolated_env(tmp)).exit_code, 0);
    const Json list = anomalies_json(db, {"--source", "msprobe"});
    ASSERT_EQ(list.size(), 1u);
    EXPECT_EQ(list[0]["rule"], "AnomalyTurbulence");
    EXPECT_EQ(list[0]["op"], "min");
    EXPECT_EQ(list[0]["kind"], "actv_grad");
    EXPECT_EQ(list[0]["reference"], nullptr) << "the earlier form says no history mean";
    std::string error;
    const auto rows = query_rows(db,
                                 {"--kind", list[0]["kind"].get<std::string>(), "--name",
                                  list[0]["name"].get<std::string>(), "--op", "min", "--steps", "1"},
                                 isolated_env(tmp), error);
    ASSERT_EQ(rows.size(), 1u) << error << " " << list[0].dump();
    EXPECT_EQ(rows[0].value, "-40");
}

TEST(CrossRank, a_planted_bad_rank_among_64_is_the_only_outlier) {
    TempDir tmp;
    const std::string job = tmp / "job", db = tmp / "store.db";
    // The spike first: a NaN reaches every rank through the all-reduce and stays, so nothing after it can stand out.
    ASSERT_EQ(run({program("msmon"), "simulate", job, "--ranks", "64", "--steps", "12", "--params", "6", "--faults",
                   "spike@5:r17x20,nan@8:r40"})
                  .exit_code,
              0);
    ASSERT_EQ(run({program("msmon"), "ingest", job, "--db", db}).exit_code, 0);
    std::set<std::pair<int, std::int64_t>> flagged;               // rank, step
    std::set<std::pair<std::int64_t, int>> non_finite_unreduced;  // step, rank
    for (const auto& a : anomalies_json(db, {"--source", "detected"})) {
        if (a["rule"] == "CrossRankOutlier") flagged.insert({a["rank"].get<int>(), a["step"].get<std::int64_t>()});
        if (a["rule"] == "NonFinite" && a["kind"] == "grad_unreduced")
            non_finite_unreduced.insert({a["step"].get<std::int64_t>(), a["rank"].get<int>()});
    }
    EXPECT_EQ(flagged, (std::set<std::pair<int, std::int64_t>>{{17, 5}}));
    // The NaN is the non-finite check's: rank 40's own gradients first (every rank's reduced ones at once, and
    // everything the step after, follow from it).
    ASSERT_FALSE(non_finite_unreduced.empty());
    EXPECT_EQ(*non_finite_unreduced.begin(), (std::pair<std::int64_t, int>{8, 40}));
    // The two events are what the default ranking shows first, each by its origin: the NaN, then the bad rank.
    const Json top = anomalies_json(db, {"--topk", "2"});
    ASSERT_EQ(top.size(), 2u);
    EXPECT_EQ(top[0]["rank"], 40);
    EXPECT_EQ(top[0]["step"], 8);
    EXPECT_EQ(top[1]["rank"], 17);
    EXPECT_EQ(top[1]["step"], 5);
}

TEST(StalledRank, a_rank_that_stops_writing_among_64_is_flagged_while_the_others_advance) {
    TempDir tmp;
    const std::string root = tmp / "job/monitor_output";
    std::vector<std::string> files;
    const std::string header = "vpp_stage,name,step,norm,shape,dtype\n";
    for (int r = 0; r < 64; ++r) {
        char name[64];
        std::snprintf(name, sizeof name, "Nov22_10-00-%02d-rank%d-%08x", r % 60, r,
                      0x10000000u + static_cast<unsigned>(r));
        std::filesystem::create_directories(root + "/" + name);
        files.push_back(root + "/" + name + "/grad_reduced_0-9999.csv");
        write_file(files.back(), header);
    }
    const std::string db = tmp / "store.db";
    Background ingest({program("msmon"), "ingest", tmp / "job", "--follow", "--db", db}, tmp.path(),
                      {{"XDG_STATE_HOME", tmp / "state"}});
    bool seen = false;
    const auto start = std::chrono::steady_clock::now();
    for (int step = 0; step < 60 && !seen; ++step) {
        for (int r = 0; r < 64; ++r)
            if (r != 9 || step < 15)
                append_file(files[static_cast<std::size_t>(r)],
                            "0,w," + std::to_string(step) + ",1.5,[4],torch.float32\n");
        // paces the input: a step every 200 ms
        std::this_thread::sleep_until(start + std::chrono::milliseconds(200 * (step + 1)));
        if (step > 20 && step % 3 == 0) {
            for (const auto& a : anomalies_json(db, {"--source", "detected"}))
                if (a["rule"] == "StalledRank") {
                    EXPECT_EQ(a["rank"], 9) << a.dump();
                    EXPECT_EQ(a["step"], 14);
                    seen = a["rank"] == 9;
                }
        }
    }
    EXPECT_TRUE(seen) << "rank 9 stopped at step 14 and was never flagged";
    ingest.signal(SIGTERM);
    EXPECT_EQ(ingest.wait(std::chrono::milliseconds(5000)), 0);
}

// Attaching to a job that is already running, and attaching again after msmon itself restarted: the backlog
// arrives in bursts that say nothing about step times; only live arrivals do. A healthy job raises no stall.
TEST(StalledRank, attaching_to_a_running_job_and_restarting_msmon_raise_no_stall) {
    TempDir tmp;
    const std::string job = tmp / "job", db = tmp / "store.db";
    Background sim(
        {program("msmon"), "simulate", job, "--ranks", "8", "--steps", "90", "--step-ms", "100", "--params", "4"},
        tmp.path());
    auto steps_written = [&] {
        std::size_t n = 0;
        std::error_code ec;
        for (auto it = std::filesystem::recursive_directory_iterator(job, ec);
             !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
            n += it->path().filename().string().rfind("grad_reduced_", 0) == 0;
        return n / 8;
    };
    ASSERT_GE(wait_until([&] { return steps_written() >= 30; }, std::chrono::milliseconds(20000)).count(), 0);
    for (int session = 0; session < 2; ++session) {  // attach mid-run; then msmon restarts and catches up again
        Background follow({program("msmon"), "ingest", job, "--follow", "--db", db}, tmp.path(),
                          {{"XDG_STATE_HOME", tmp / "state"}});
        // msmon catches up, then follows 30 live steps (the last step at most): until it has stored that step
        // on every rank.
        const std::size_t until_step = std::min<std::size_t>(steps_written() + 30, 89);
        ASSERT_GE(
            wait_until([&] { return ranks_at_step(db, until_step) == 8; }, std::chrono::milliseconds(20000)).count(), 0)
            << "step " << until_step << " never reached the store on every rank; stderr: " << follow.err();
        follow.signal(SIGTERM);
        EXPECT_EQ(follow.wait(std::chrono::milliseconds(5000)), 0);
        // The job moves on while msmon is away: 5 steps.
        const std::size_t back_at = std::min<std::size_t>(steps_written() + 5, 90);
        ASSERT_GE(wait_until([&] { return steps_written() >= back_at; }, std::chrono::milliseconds(20000)).count(), 0);
    }
    EXPECT_EQ(sim.wait(std::chrono::milliseconds(30000)), 0);
    std::size_t stalls = 0;
    for (const auto& a : anomalies_json(db, {"--source", "detected"}))
        if (a["rule"] == "StalledRank") {
            ++stalls;
            ADD_FAILURE() << a.dump();
        }
    EXPECT_EQ(stalls, 0u);
}

// A job that ends: every rank stops at the last step within moments of each other. None is behind the others,
// so none stalled (msmon used to flag all but the last to write, a second after every job's end).
TEST(StalledRank, a_job_that_ends_raises_no_stall_on_any_rank) {
    TempDir tmp;
    const std::string job = tmp / "job", db = tmp / "store.db";
    std::filesystem::create_directories(job);
    Background follow({program("msmon"), "ingest", job, "--follow", "--db", db}, tmp.path(),
                      {{"XDG_STATE_HOME", tmp / "state"}});
    ASSERT_GE(wait_until([&] { return std::filesystem::exists(db); }, std::chrono::milliseconds(5000)).count(), 0)
        << "msmon did not open its store; stderr: " << follow.err();
    auto sim =
        run({program("msmon"), "simulate", job, "--ranks", "8", "--steps", "30", "--step-ms", "100", "--params", "4"});
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    ASSERT_GE(wait_until([&] { return ranks_at_step(db, 29) == 8; }, std::chrono::milliseconds(5000)).count(), 0)
        << "the job's last step never reached the store on every rank; stderr: " << follow.err();
    // paces the input: the ended job stays silent for 30 median step times while msmon watches (a stalled rank is
    // one silent for 5, and at least 1 s)
    std::this_thread::sleep_for(std::chrono::milliseconds(3000));
    follow.signal(SIGTERM);
    EXPECT_EQ(follow.wait(std::chrono::milliseconds(5000)), 0);
    const auto found = anomalies_json(db, {"--source", "detected"});
    for (const auto& a : found) ADD_FAILURE() << a.dump();
    EXPECT_EQ(found.size(), 0u);
}

}  // namespace
}  // namespace msmon::test

namespace msmon::test {
namespace {

std::string dump_entry(const std::string& tag, int step, int call, const std::string& op, const std::string& value) {
    const std::string key = tag + "_step_" + std::to_string(step) + "_call_" + std::to_string(call);
    return "\"" + key + "\": {\"rank\": 0, \"step\": " + std::to_string(step) +
           ", \"micro_step\": 0, \"pp_stage\": 0, \"vpp_stage\": 0, \"call_id\": " + std::to_string(call) +
           ", \"tag_name\": \"" + tag + "\", \"message\": \"Rule AnomalyNan reports anomaly signal in ('" + tag +
           "', '" + op + "') at step " + std::to_string(step) + ", current value " + value +
           ", history mean 0.5.\", \"group_mates\": [0]}";
}

TEST(AnomalyDump, entries_stay_stored_when_the_trainer_resets_the_dump_and_bad_json_is_counted) {
    TempDir tmp;
    const std::string dir = tmp / "job/monitor_output/anomaly_detected/rank0";
    std::filesystem::create_directories(dir);
    const std::string dump = dir + "/anomaly.json";
    const std::string tag = "0:layers.1.fc1.weight/rank0/post_grad";
    write_file(dump, "{\n " + dump_entry(tag, 7, 41, "norm", "nan") + "\n}");
    const std::string db = tmp / "store.db";
    Background follow({program("msmon"), "ingest", tmp / "job", "--follow", "--db", db, "--json"}, tmp.path(),
                      {{"XDG_STATE_HOME", tmp / "state"}});
    auto count = [&] {
        auto r = run({program("msmon"), "anomalies", "--db", db, "--source", "msprobe", "--format", "json"});
        return r.exit_code == 0 ? nlohmann::json::parse(r.out).size() : 0u;
    };
    ASSERT_GE(wait_until([&] { return count() == 1; }, std::chrono::milliseconds(5000)).count(), 0);
    // The one value `sql` selects from the store, or "" while there is none.
    auto stored = [&](const std::string& sql) {
        std::string error;
        const auto rows = sqlite_rows(db, sql, error);
        return rows.size() == 1 ? rows[0][0] : std::string();
    };
    write_file(dump, "{}");  // the trainer restarted (or collection was re-enabled): the dump is reset
    ASSERT_GE(wait_until([&] { return stored("SELECT size FROM whole_file WHERE path LIKE '%/anomaly.json'") == "2"; },
                         std::chrono::milliseconds(3000))
                  .count(),
              0)
        << "msmon never read the reset dump; stderr: " << follow.err();
    write_file(dump, "{\n " + dump_entry(tag, 9, 41, "norm", "nan") + "\n}");
    EXPECT_GE(wait_until([&] { return count() == 2; }, std::chrono::milliseconds(3000)).count(), 0)
        << "an anomaly stored before the reset was lost";
    write_file(dir + "/../anomaly_analyse.json", "{ this is not json }");
    ASSERT_GE(wait_until(
                  [&] {
                      return stored(
                                 "SELECT count(*) FROM parse_issue JOIN file ON file.id = parse_issue.file_id "
                                 "WHERE file.path LIKE '%/anomaly_analyse.json'") == "1";
                  },
                  std::chrono::milliseconds(3000))
                  .count(),
              0)
        << "msmon never stored the unreadable anomaly_analyse.json; stderr: " << follow.err();
    follow.signal(SIGTERM);
    ASSERT_EQ(follow.wait(std::chrono::milliseconds(5000)), 0);
    EXPECT_NE(follow.out().find("\"errors\": 1"), std::string::npos) << follow.out();
    EXPECT_NE(read_file(tmp / "state/msmon/msmon.log").find("anomaly_analyse.json: unreadable JSON"),
              std::string::npos);
    EXPECT_EQ(count(), 2u);
}

}  // namespace
}  // namespace msmon::test
