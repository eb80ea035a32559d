// The job-level judge (msmon judge) on a real clickhouse-server: a real msprobe fault run split over two nodes'
// agents, replayed live step by step, with two judges at once and one of them killed halfway and started again.
// Node a alone cannot tell which replica changed (a 1-1 tie, or nothing when the odd copy is on the other node);
// the judge over the whole job must name the rank, the step and the tensor where it began, once, as a single local
// ingest of every rank does, and msmon anomalies --store and msmon-tui --store (Enter) must land there.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <tuple>

#include "store/clickhouse/clickhouse_job_feed.hpp"
#include "store/clickhouse/clickhouse_schema.hpp"
#include "tests/support/cluster_services.hpp"
#include "tests/support/e2e_support.hpp"
#include "tests/support/run_replay.hpp"
#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

struct Origin {
    std::int64_t step = 0;
    int rank = 0;
    std::string kind, name;
};

// An anomaly as compared between the judge and a local ingest: rule, rank, step, kind, tensor.
using Finding = std::tuple<std::string, int, std::int64_t, std::string, std::string>;

std::set<Finding> cross_rank_findings(const std::string& anomalies_json) {
    std::set<Finding> out;
    for (const auto& a : nlohmann::json::parse(anomalies_json)) {
        const std::string rule = a.at("rule");
        if (rule == "ReplicaDivergence" || rule == "ReplicaTie" || rule == "CrossRankOutlier" ||
            rule == "OptimizerStep")
            out.insert({rule, a.at("rank").get<int>(), a.at("step").get<std::int64_t>(), a.at("kind"), a.at("name")});
    }
    return out;
}

std::string describe(const std::set<Finding>& findings) {
    std::string s;
    for (const auto& [rule, rank, step, kind, name] : findings)
        s += rule + " rank " + std::to_string(rank) + " step " + std::to_string(step) + " " + kind + " " + name + "\n";
    return s;
}

// How the judges run: `count` of them from the start (judge 1, if there is one, runs --on-incident and writes
// gauges); judge 0 SIGKILLed once step `kill_at` is judged and started again at once, or with
// `restart_once_all_shipped`, only once every rank's last step is in ClickHouse.
struct Judges {
    int count = 2;
    std::int64_t kill_at = 25;
    bool restart_once_all_shipped = false;
};

class JobJudge : public ::testing::Test {
protected:
    // `nodes`: each node's ranks; `order`: the order the nodes' agents start in, each once the one before shipped
    // rows, or with `late_after`, once the judges judged that step without the later nodes (their ranks come late).
    // `collections`: a node's replay (by node; the others write steps 0-49 in one go).
    void judge_split_run(const std::string& fault, const std::vector<std::vector<int>>& nodes,
                         const std::vector<int>& order, const Origin& expected, std::int64_t late_after = -1,
                         const std::map<std::size_t, std::vector<Collection>>& collections = {},
                         const Judges& judging = {}) {
        if (find_installed("clickhouse-server").empty())
            MSMON_SKIP_UNLESS_REQUIRED("clickhouse-server is not installed (scripts/setup-cluster-deps.sh)");
        const std::string shared = shared_dir();
        if (shared.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real msprobe fault runs");
        const std::string fixture = shared + "/fixtures/msprobe-faults/" + fault;
        TempDir tmp;
        ClickHouseTestServer ch(tmp / "clickhouse");
        ASSERT_TRUE(ch.ready()) << "clickhouse-server did not start: " << ch.log();
        const std::string url = ch.url("msmon_judge"), job = "job-" + fault;
        const auto env = isolated_env(tmp);
        ensure_clickhouse_schema(ClickHouseClient(ch.target("msmon_judge")));  // the test's own queries come first

        // Each node's ranks, as its own monitor_output, replayed live into the node's job folder.
        std::vector<std::string> node_dirs;
        for (std::size_t n = 0; n < nodes.size(); ++n) {
            const std::string source = tmp / ("source" + std::to_string(n)) + "/monitor_output";
            fs::create_directories(source);
            for (const auto& entry : fs::directory_iterator(fixture + "/monitor_output"))
                for (int rank : nodes[n])
                    if (entry.path().filename().string().find("-rank" + std::to_string(rank) + "-") !=
                        std::string::npos)
                        fs::copy(entry.path(), source + "/" + entry.path().filename().string(),
                                 fs::copy_options::recursive);
            node_dirs.push_back(tmp / ("node" + std::to_string(n)));
            fs::create_directories(node_dirs.back() + "/job/monitor_output");
        }
        std::vector<std::thread> replays;
        struct JoinAll {
            std::vector<std::thread>& threads;
            ~JoinAll() {
                for (auto& t : threads)
                    if (t.joinable()) t.join();
            }
        } join_all{replays};
        for (std::size_t n = 0; n < nodes.size(); ++n) {
            ReplayPlan plan;
            plan.collections = collections.count(n) ? collections.at(n) : std::vector<Collection>{{0, 49}};
            plan.step_time = milliseconds(120);
            replays.emplace_back([&, n, plan] {
                replay_msprobe_run(tmp / ("source" + std::to_string(n)) + "/monitor_output",
                                   node_dirs[n] + "/job/monitor_output", plan);
            });
        }
        const auto scalar = [&](const std::string& sql) { return ch.scalar(sql); };
        const std::string where_job = " WHERE job = '" + job + "'";
        const auto judged_through = [&] {
            return std::atoll(
                scalar("SELECT if(count() = 0, -1, max(step)) FROM msmon_judge.judged_steps" + where_job).c_str());
        };
        const std::vector<std::string> judge_args = {program("msmon"), "judge", "--store",   url,  "--job", job,
                                                     "--grace-ms",     "15000", "--poll-ms", "100"};
        // Two judges from the start; agents one after the other, the second once the first's rows are in. Judge 1
        // (never killed) runs a command per new incident of the job and writes gauges.
        std::vector<std::unique_ptr<Background>> judges, agents(nodes.size());
        judges.push_back(std::make_unique<Background>(judge_args, tmp.path(), env));
        fs::create_directories(tmp / "incidents");
        fs::create_directories(tmp / "prom");
        auto judge1_args = judge_args;
        for (const std::string& more :
             {std::string("--on-incident"), "cat > " + tmp / "incidents" + "/incident-$$.json",
              std::string("--prom-textfile"), tmp / "prom"})
            judge1_args.push_back(more);
        if (judging.count > 1) judges.push_back(std::make_unique<Background>(judge1_args, tmp.path(), env));
        const auto judges_said = [&] {
            std::string s;
            for (const auto& j : judges) s += j ? j->err() : "";
            return s;
        };
        for (std::size_t i = 0; i < order.size(); ++i) {
            const int n = order[i];
            agents[static_cast<std::size_t>(n)] = std::make_unique<Background>(
                agent_args(node_dirs[static_cast<std::size_t>(n)], url, job, n, 200), tmp.path(), env);
            if (i + 1 < order.size() && late_after >= 0) {
                ASSERT_GE(wait_until([&] { return judged_through() >= late_after; }, milliseconds(120000)).count(), 0)
                    << "no judge reached step " << late_after;
            } else if (i + 1 < order.size()) {
                const std::string first_rank = std::to_string(nodes[static_cast<std::size_t>(n)][0]);
                ASSERT_GE(wait_until(
                              [&] {
                                  return scalar("SELECT count() FROM msmon_judge.step_ranks" + where_job +
                                                " AND rank = " + first_rank) != "0";
                              },
                              milliseconds(60000))
                              .count(),
                          0)
                    << "node " << n << "'s agent shipped nothing";
            }
        }
        // Done once every rank's last step is in ClickHouse (the agents' idle signal: each node's ranks at step 49
        // in step_ranks) and every step is judged with every rank that wrote it (the judges': judged_steps holds as
        // many ranks per step as step_ranks), late ranks included.
        std::size_t all_ranks = 0;
        for (const auto& n : nodes) all_ranks += n.size();
        const auto shipped_last_step = [&] {
            return scalar("SELECT uniqExact(rank) FROM msmon_judge.step_ranks" + where_job + " AND step = 49") ==
                   std::to_string(all_ranks);
        };
        // Judge 0 killed partway through the run (SIGKILL: nothing of it is flushed), then started again.
        ASSERT_GE(wait_until([&] { return judged_through() >= judging.kill_at; }, milliseconds(120000)).count(), 0)
            << "no judge reached step " << judging.kill_at << ": " << judges_said();
        judges[0]->signal(SIGKILL);
        judges[0]->wait(milliseconds(10000));
        if (judging.restart_once_all_shipped) {
            ASSERT_GE(wait_until(shipped_last_step, milliseconds(120000)).count(), 0)
                << "the agents shipped no step 49";
        }
        judges[0] = std::make_unique<Background>(judge_args, tmp.path(), env);
        for (auto& r : replays) r.join();  // the last step written
        const auto unjudged = [&] {
            return scalar("SELECT count() FROM (SELECT step, uniqExact(rank) AS n FROM msmon_judge.step_ranks" +
                          where_job +
                          " GROUP BY step) ANY LEFT JOIN (SELECT step, max(ranks) AS judged FROM "
                          "msmon_judge.judged_steps" +
                          where_job + " GROUP BY step) USING step WHERE judged < n");
        };
        ASSERT_GE(wait_until([&] { return shipped_last_step() && judged_through() >= 49 && unjudged() == "0"; },
                             milliseconds(120000))
                      .count(),
                  0)
            << "judged through " << judged_through() << ", steps not judged with every rank " << unjudged() << ": "
            << judges_said();

        // msmon anomalies --store --incidents: the origin first.
        const auto incidents =
            run({program("msmon"), "anomalies", "--store", url, "--job", job, "--incidents", "--format", "json"}, env);
        ASSERT_EQ(incidents.exit_code, 0) << incidents.err;
        const auto list = nlohmann::json::parse(incidents.out);
        ASSERT_FALSE(list.empty()) << incidents.out;
        // On a failure, what the judges said (they log to the isolated state folder's msmon.log).
        std::string said;
        for (const auto& line : lines_of(read_file(log_path(tmp))))
            if (line.find("judge:") != std::string::npos) said += line + "\n";
        SCOPED_TRACE("the judges' log:\n" + said.substr(said.size() > 6000 ? said.size() - 6000 : 0) +
                     "the judges' stderr: " + judges_said() + "\njudged_steps (step, ranks, judge):\n" +
                     scalar("SELECT groupArray(tuple(step, rank_list, judge)) FROM (SELECT step, rank_list, judge "
                            "FROM msmon_judge.judged_steps" +
                            where_job + " ORDER BY step, judged)"));
        EXPECT_EQ(list[0].at("step").get<std::int64_t>(), expected.step) << incidents.out;
        EXPECT_EQ(list[0].at("rank").get<int>(), expected.rank) << incidents.out;
        EXPECT_EQ(list[0].at("kind").get<std::string>(), expected.kind) << incidents.out;
        EXPECT_EQ(list[0].at("name").get<std::string>(), expected.name) << incidents.out;

        // Each finding once, and the same as one local ingest of every rank finds across ranks.
        const auto anomalies =
            run({program("msmon"), "anomalies", "--store", url, "--job", job, "--format", "json"}, env);
        ASSERT_EQ(anomalies.exit_code, 0) << anomalies.err;
        const auto local_db = ingest_msprobe_fault_run(tmp, fault);
        const auto local = run({program("msmon"), "anomalies", "--db", local_db, "--format", "json"}, env);
        ASSERT_EQ(local.exit_code, 0) << local.err;
        const auto judged = cross_rank_findings(anomalies.out), expected_findings = cross_rank_findings(local.out);
        EXPECT_EQ(judged, expected_findings) << "judge:\n"
                                             << describe(judged) << "one local ingest:\n"
                                             << describe(expected_findings);
        std::set<std::string> seen;
        for (const auto& a : nlohmann::json::parse(anomalies.out))
            EXPECT_TRUE(seen.insert(a.dump()).second) << "listed twice: " << a.dump();
        // Whatever the two judges wrote, one row per finding (rank, step, rule, kind) in the table.
        const std::string repeated =
            scalar("SELECT count() FROM (SELECT count() AS c FROM msmon_judge.anomalies FINAL" + where_job +
                   " AND node = '' GROUP BY rank, step, rule, kind) WHERE c > 1");
        EXPECT_EQ(repeated, "0") << "the judges' rows collapse to one per finding: " << anomalies.out;

        if (judging.count > 1) judge1_said(tmp, job, list, expected);
        tui_lands_on(tmp, url, job, expected);
    }

    // Judge 1's command ran once per incident of the job, the first for this one, with its origin; its gauges
    // count the judge's findings on the origin's rank.
    static void judge1_said(const TempDir& tmp, const std::string& job, const nlohmann::json& list,
                            const Origin& expected) {
        std::vector<nlohmann::json> runs;
        ASSERT_GE(wait_until(
                      [&] {
                          runs.clear();
                          for (const auto& f : find_files(tmp / "incidents", ".json"))
                              if (const auto text = read_file(f); !text.empty() && text.back() == '\n')
                                  runs.push_back(nlohmann::json::parse(text));
                          return runs.size() >= list.size();
                      },
                      milliseconds(30000))
                      .count(),
                  0)
            << runs.size() << " --on-incident runs for " << list.size() << " incidents";
        EXPECT_EQ(runs.size(), list.size());
        std::set<std::pair<std::int64_t, int>> announced;
        for (const auto& r : runs) announced.insert({r.at("step").get<std::int64_t>(), r.at("rank").get<int>()});
        EXPECT_TRUE(announced.count({expected.step, expected.rank})) << runs.size() << " runs";
        // The gauges are rewritten about once a second. (Which judge finds what under load varies: the findings'
        // gauges are checked with one judge, in JobJudgeConsistency.)
        const std::string last_step = "msmon_rank_last_step{job_id=\"" + job + "\",node=\"judge\",rank=\"" +
                                      std::to_string(expected.rank) + "\"} 49";
        std::string prom;
        wait_until(
            [&] {
                prom = read_file(tmp / "prom/msmon-judge.prom");
                return prom.find(last_step) != std::string::npos;
            },
            milliseconds(20000));
        EXPECT_NE(prom.find(last_step), std::string::npos) << prom;
    }

    // msmon-tui --store: the incidents list leads with it; Enter charts the origin's rank at its step.
    static void tui_lands_on(const TempDir& tmp, const std::string& url, const std::string& job,
                             const Origin& expected) {
        if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
        auto tui_env = tmux_env(tmp);
        TmuxSession t(program("msmon-tui") + " --store " + url + " --job " + job, 160, 45, tui_env);
        t.send_keys("3", true);
        std::string screen = t.wait_for(expected.name, milliseconds(20000));
        ASSERT_FALSE(screen.empty()) << t.capture();
        t.send_keys("Enter");
        const std::string readout =
            "step " + std::to_string(expected.step) + ": rank " + std::to_string(expected.rank) + "=";
        screen = t.wait_for(readout, milliseconds(20000));
        ASSERT_FALSE(screen.empty()) << "Enter did not chart rank " << expected.rank << " at step " << expected.step
                                     << ":\n"
                                     << t.capture();
        EXPECT_NE(lines_of(screen)[1].find(expected.name), std::string::npos) << screen;
    }
};

// sdc-weight: rank 1's copy of layers.0.fc2.weight altered after step 30's update. Node a (ranks 0-1) sees a 1-1
// tie; node b (ranks 2-3) sees its two copies agree.
TEST_F(JobJudge, a_replica_altered_on_a_two_rank_node_is_found_by_the_judge_whichever_agent_starts_first) {
    // Node a's agent first: node b's may ship before step 31 is judged, or (under a sanitizer's pace) only after,
    // its ranks never seen then: the tie reported gives way to the departure their late copies show.
    judge_split_run("sdc-weight", {{0, 1}, {2, 3}}, {0, 1}, {31, 1, "param_origin", "module.layers.0.fc2.weight"});
    // Node b's agent first, then node a's (the ranks of the fault come second).
    judge_split_run("sdc-weight", {{0, 1}, {2, 3}}, {1, 0}, {31, 1, "param_origin", "module.layers.0.fc2.weight"});
}

// The same with node a's agent first, and node b writing steps 0-9, then nothing for 25 s: steps 10 on are judged
// with ranks 0 and 1 only once the 15 s grace passed, so step 31 is a 1-1 tie while ranks 2 and 3 (replicas seen
// before) are still to come. The tie is held, and their late copies name rank 1: no tie is ever reported.
TEST_F(JobJudge, a_replica_altered_on_a_two_rank_node_is_found_when_the_other_node_falls_behind_its_grace) {
    judge_split_run("sdc-weight", {{0, 1}, {2, 3}}, {0, 1}, {31, 1, "param_origin", "module.layers.0.fc2.weight"}, -1,
                    {{1, {{0, 9}, {10, 49, milliseconds(25000)}}}});
}

// The same with one judge and node b pausing 35 s: the judge is killed once it judged step 49 (holding step 31's
// tie for ranks 2 and 3) and started again only once their late copies are in: judged again with every rank, step 31's
// departure is written (the restarted judge dropped what it found for ranks it had judged the step with before, the
// held tie's ranks too).
TEST_F(JobJudge, a_judge_killed_while_it_held_a_tie_names_the_replica_when_started_again) {
    judge_split_run("sdc-weight", {{0, 1}, {2, 3}}, {0, 1}, {31, 1, "param_origin", "module.layers.0.fc2.weight"}, -1,
                    {{1, {{0, 9}, {10, 49, milliseconds(35000)}}}}, {1, 49, true});
}

// The same with node b's agent started only once the judges judged step 35 without it: ranks 2 and 3 were never
// seen when step 31's 1-1 tie was judged, so it is reported; their late copies name rank 1, and the tie gives way.
TEST_F(JobJudge, a_replica_altered_on_a_two_rank_node_is_found_when_the_other_nodes_agent_starts_35_steps_late) {
    judge_split_run("sdc-weight", {{0, 1}, {2, 3}}, {0, 1}, {31, 1, "param_origin", "module.layers.0.fc2.weight"}, 35);
}

// A judge reported a 1-1 tie at step 31 before it had seen ranks 2 and 3 (their node's agent started after the step
// was judged); their late copies named rank 1. Every reader shows the departure, not the tie; ties elsewhere stay.
TEST(JobJudgeTies, a_tie_that_late_replicas_broke_gives_way_to_the_departure_they_named) {
    if (find_installed("clickhouse-server").empty())
        MSMON_SKIP_UNLESS_REQUIRED("clickhouse-server is not installed (scripts/setup-cluster-deps.sh)");
    TempDir tmp;
    ClickHouseTestServer ch(tmp / "clickhouse");
    ASSERT_TRUE(ch.ready()) << "clickhouse-server did not start: " << ch.log();
    const std::string job = "job-ties";
    const auto finding = [](const std::string& rule, int rank, std::int64_t step, const std::string& name,
                            std::vector<int> mates) {
        AnomalyRecord a;
        a.source = "detected";
        a.rule = rule;
        a.rank = rank;
        a.step = step;
        a.kind = "param_origin";
        a.op = "norm";
        a.name = name;
        a.tag_name = a.kind + "/rank" + std::to_string(rank);
        a.group_mates = std::move(mates);
        a.value = 2.5;
        a.reference = 2.4;
        a.message = rule + " of rank " + std::to_string(rank);
        a.score = rule == "ReplicaTie" ? 40 : 85;
        return a;
    };
    const std::string fc2 = "module.layers.0.fc2.weight", fc1 = "module.layers.0.fc1.weight";
    ClickHouseJobFeed feed(ch.target("msmon_judge"), job);
    feed.write_anomalies({finding("ReplicaTie", 0, 31, fc2, {1}), finding("ReplicaTie", 1, 31, fc2, {0}),
                          finding("ReplicaTie", 2, 31, fc1, {3}), finding("ReplicaTie", 0, 40, fc2, {1})});
    feed.write_anomalies({finding("ReplicaDivergence", 1, 31, fc2, {0, 2, 3})});
    const auto env = isolated_env(tmp);
    const auto listed =
        run({program("msmon"), "anomalies", "--store", ch.url("msmon_judge"), "--job", job, "--format", "json"}, env);
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    EXPECT_EQ(cross_rank_findings(listed.out), (std::set<Finding>{{"ReplicaDivergence", 1, 31, "param_origin", fc2},
                                                                  {"ReplicaTie", 2, 31, "param_origin", fc1},
                                                                  {"ReplicaTie", 0, 40, "param_origin", fc2}}))
        << listed.out;
    const auto incidents = run({program("msmon"), "anomalies", "--store", ch.url("msmon_judge"), "--job", job,
                                "--incidents", "--format", "json"},
                               env);
    ASSERT_EQ(incidents.exit_code, 0) << incidents.err;
    const auto list = nlohmann::json::parse(incidents.out);
    ASSERT_FALSE(list.empty()) << incidents.out;
    EXPECT_EQ(list[0].at("step").get<std::int64_t>(), 31) << incidents.out;
    EXPECT_EQ(list[0].at("rank").get<int>(), 1) << incidents.out;
    EXPECT_EQ(list[0].at("name").get<std::string>(), fc2) << incidents.out;
}

// sdc-grad: rank 3's reduced gradient of layers.2.fc1.weight off by half at step 22, rank 3 alone on node b: its
// agent has no replica to compare with at all. Node b's agent starts only once the judges judged 30 steps without
// it: rank 3's old steps and its new ones arrive at once, and are judged late, in its order, against every copy.
TEST_F(JobJudge, a_reduced_gradient_off_on_a_node_of_its_own_is_found_by_the_judge_when_that_node_comes_30_steps_late) {
    judge_split_run("sdc-grad", {{0, 1, 2}, {3}}, {0, 1}, {22, 3, "grad_reduced", "module.layers.2.fc1.weight"}, 30);
}

// 64 ranks (8 data-parallel x 8 tensor-parallel) over 8 nodes of 8 ranks: every replica of a shard is on another
// node, so no agent can compare any. With a replica's weight altered (rank 13, step 26), a reduced gradient off
// (rank 50, step 40) and the learning rate x20 on every rank (step 52), the job-level judge and one local ingest
// of all 64 ranks give the same incidents.
TEST(JobJudgeConsistency, a_64_rank_job_over_8_nodes_is_judged_as_one_local_ingest_of_every_rank_judges_it) {
    if (find_installed("clickhouse-server").empty())
        MSMON_SKIP_UNLESS_REQUIRED("clickhouse-server is not installed (scripts/setup-cluster-deps.sh)");
    TempDir tmp;
    ClickHouseTestServer ch(tmp / "clickhouse");
    ASSERT_TRUE(ch.ready()) << "clickhouse-server did not start: " << ch.log();
    const std::string url = ch.url("msmon_judge"), job = "job-64";
    const auto env = isolated_env(tmp);
    const auto sim = run({program("msmon"), "simulate", tmp / "all", "--ranks", "64", "--tp", "8", "--steps", "64",
                          "--params", "6", "--faults", "sdc@26:r13,sdcgrad@40:r50,lr@52"},
                         env);
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    std::vector<std::string> node_jobs;
    for (int n = 0; n < 8; ++n) {
        node_jobs.push_back(tmp / ("node" + std::to_string(n)) + "/job");
        fs::create_directories(node_jobs.back() + "/monitor_output");
        for (const auto& entry : fs::directory_iterator(tmp / "all/monitor_output")) {
            const std::string name = entry.path().filename().string();
            for (int k = 0; k < 8; ++k)
                if (name.find("-rank" + std::to_string(n * 8 + k) + "-") != std::string::npos)
                    fs::rename(entry.path(), node_jobs.back() + "/monitor_output/" + name);
        }
    }
    for (int n = 0; n < 8; ++n) {
        const auto agent = run({program("msmon"), "ingest", node_jobs[static_cast<std::size_t>(n)], "--db",
                                tmp / ("node" + std::to_string(n)) + "/store.db", "--sink", url, "--job", job, "--node",
                                "node" + std::to_string(n)},
                               env);
        ASSERT_EQ(agent.exit_code, 0) << agent.err;
    }
    const auto incidents_of = [&](const std::vector<std::string>& source) {
        std::vector<std::string> args = {program("msmon"), "anomalies"};
        args.insert(args.end(), source.begin(), source.end());
        for (const char* more : {"--incidents", "--format", "json"}) args.push_back(more);
        const auto r = run(args, env);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        std::string out;
        for (const auto& i : nlohmann::json::parse(r.out.empty() ? "[]" : r.out))
            out += std::to_string(i.at("step").get<std::int64_t>()) + " rank " +
                   std::to_string(i.at("rank").get<int>()) + " " + i.at("kind").get<std::string>() + " " +
                   i.at("name").get<std::string>() + " " + i.at("rule").get<std::string>() + " anomalies " +
                   std::to_string(i.at("anomalies").get<int>()) + " ranks " + i.at("ranks").dump() + "\n";
        return out;
    };
    const std::vector<std::string> store = {"--store", url, "--job", job};
    const std::string agents_only = incidents_of(store);
    fs::create_directories(tmp / "prom");
    const auto judge =
        run({program("msmon"), "judge", "--store", url, "--job", job, "--once", "--prom-textfile", tmp / "prom"}, env);
    ASSERT_EQ(judge.exit_code, 0) << judge.err;
    // Its gauges count its findings by rank and rule.
    const std::string prom = read_file(tmp / "prom/msmon-judge.prom");
    for (const char* rank : {"13", "50"})
        EXPECT_NE(prom.find("msmon_rank_anomalies{job_id=\"" + job + "\",node=\"judge\",rank=\"" + rank +
                            "\",rule=\"ReplicaDivergence\"}"),
                  std::string::npos)
            << prom;
    EXPECT_NE(prom.find("msmon_rank_last_step{job_id=\"" + job + "\",node=\"judge\",rank=\"63\"} 63"),
              std::string::npos)
        << prom;
    std::vector<std::string> local_args = {program("msmon"), "ingest"};
    local_args.insert(local_args.end(), node_jobs.begin(), node_jobs.end());
    for (const std::string& more : {std::string("--db"), tmp / "local.db"}) local_args.push_back(more);
    const auto local = run(local_args, env);
    ASSERT_EQ(local.exit_code, 0) << local.err;
    const std::string judged = incidents_of(store), one_ingest = incidents_of({"--db", tmp / "local.db"});
    EXPECT_EQ(judged, one_ingest);
    // msmon health --store: 8 replica groups, each across the 8 nodes, judged by the judge.
    const auto health = run({program("msmon"), "health", "--store", url, "--job", job}, env);
    ASSERT_EQ(health.exit_code, 0) << health.err;
    EXPECT_NE(health.out.find("where the checks run (64 ranks on 8 nodes):"), std::string::npos) << health.out;
    EXPECT_NE(health.out.find("8 groups, 8 of them across nodes; no node holds two replicas of one: only the judge "
                              "compares them"),
              std::string::npos)
        << health.out;
    EXPECT_NE(health.out.find("ranks 4,12,20,28,36,44,52,60 on node0,node1,node2,node3,node4,node5,node6,node7"),
              std::string::npos)
        << health.out;
    EXPECT_NE(health.out.find("judged through step 63 (64 steps;"), std::string::npos) << health.out;
    EXPECT_NE(one_ingest.find("40 rank 50 grad_reduced"), std::string::npos) << one_ingest;
    EXPECT_NE(one_ingest.find("52 rank 0 derived.update_ratio"), std::string::npos) << one_ingest;
    // Without the judge the agents saw no replica: the reduced gradient was not found.
    EXPECT_EQ(agents_only.find("40 rank 50 grad_reduced"), std::string::npos) << agents_only;
}

}  // namespace
}  // namespace msmon::test
