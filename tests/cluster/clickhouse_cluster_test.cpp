// The whole-job view end to end, against a real clickhouse-server and node_exporter started by the test on
// loopback: 4 simulated nodes of 8 ranks, each with its own agent (msmon ingest --follow --sink), ClickHouse
// killed and restarted mid-run, one agent killed and restarted mid-run. ClickHouse must end holding exactly
// the union of the 4 local stores, no value missing and none stored twice.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "store/clickhouse/clickhouse_reader.hpp"
#include "store/clickhouse/clickhouse_schema.hpp"
#include "tests/support/cluster_services.hpp"
#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

constexpr int kNodes = 4;
constexpr int kRanksPerNode = 8;
constexpr int kSteps = 40;
const std::string kJob = "job-4x8";

std::vector<std::string> sorted_lines(const std::string& text) {
    std::vector<std::string> lines;
    for (std::size_t start = 0; start < text.size();) {
        auto nl = text.find('\n', start);
        lines.push_back(text.substr(start, nl - start));
        if (nl == std::string::npos) break;
        start = nl + 1;
    }
    if (!lines.empty()) lines.erase(lines.begin());  // the CSV header
    std::sort(lines.begin(), lines.end());
    return lines;
}

std::vector<std::string> cluster_agent_args(const std::string& node_dir, const std::string& url, int node) {
    auto args = agent_args(node_dir, url, kJob, node, 300);
    for (const std::string& more : {std::string("--prom-textfile"), node_dir + "/prom", std::string("--monitor-config"),
                                    std::string(MSMON_SOURCE_DIR) + "/configs/nan-alert-with-dump.json"})
        args.push_back(more);
    return args;
}

TEST(ClickHouseCluster, four_agents_ship_the_union_of_their_stores_exactly_once_across_outages_and_restarts) {
    std::string missing;
    for (const char* name : {"clickhouse-server", "prometheus-node-exporter", "promtool"})
        if (find_installed(name).empty()) missing += (missing.empty() ? "" : ", ") + std::string(name);
    if (!missing.empty())
        MSMON_SKIP_UNLESS_REQUIRED(missing + " not installed (scripts/setup-cluster-deps.sh installs them)");
    TempDir tmp;
    ClickHouseTestServer ch(tmp / "clickhouse");
    ASSERT_TRUE(ch.ready()) << "clickhouse-server did not start: " << ch.log();
    const std::string url = ch.url("msmon_it");
    const auto env = isolated_env(tmp);
    // Merges off (the schema made first): ReplacingMergeTree would otherwise collapse a re-sent row in the
    // background and hide it from the physical count below. A restarted server starts merging again: stopped again.
    ensure_clickhouse_schema(ClickHouseClient(ch.target("msmon_it")));
    ch.scalar("SYSTEM STOP MERGES");

    // 4 nodes write live (a step every 400 ms: agents slowed by a sanitizer still have steps to ship when ClickHouse
    // dies at step 10, and an agent with nothing new to ship never calls it), ranks 8k..8k+7; a NaN on rank 8k+3 at
    // step 12.
    std::vector<std::unique_ptr<Background>> sims, agents;
    for (int n = 0; n < kNodes; ++n) {
        const std::string dir = tmp / ("node" + std::to_string(n));
        std::filesystem::create_directories(dir + "/job");
        std::filesystem::create_directories(dir + "/prom");
        sims.push_back(std::make_unique<Background>(
            std::vector<std::string>{program("msmon"), "simulate", dir + "/job", "--ranks",
                                     std::to_string(kRanksPerNode), "--first-rank", std::to_string(n * kRanksPerNode),
                                     "--steps", std::to_string(kSteps), "--step-ms", "400", "--params", "6", "--faults",
                                     "nan@12:r" + std::to_string(n * kRanksPerNode + 3)},
            tmp.path(), env));
        agents.push_back(std::make_unique<Background>(cluster_agent_args(dir, url, n), tmp.path(), env));
    }
    auto shipped = [&] {
        try {
            return std::stoll(ch.scalar("SELECT count() FROM msmon_it.points"));
        } catch (const std::exception&) {
            return -1LL;
        }
    };
    ASSERT_GE(wait_until([&] { return shipped() > 0; }, std::chrono::seconds(30)).count(), 0)
        << "nothing reached ClickHouse; agent 0 stderr: " << agents[0]->err();

    // Mid-run, once every node has shipped step 10 (of 40): ClickHouse dies (SIGKILL) until every other agent has
    // found it gone, and node 1's agent is killed and restarted meanwhile.
    auto nodes_past = [&](int step) {
        try {
            return std::stoll(
                ch.scalar("SELECT uniqExact(node) FROM msmon_it.points WHERE step >= " + std::to_string(step)));
        } catch (const std::exception&) {
            return -1LL;
        }
    };
    ASSERT_GE(wait_until([&] { return nodes_past(10) == kNodes; }, std::chrono::seconds(30)).count(), 0)
        << "not every node shipped step 10; agent 0 stderr: " << agents[0]->err();
    std::vector<std::size_t> said_before;
    for (auto& a : agents) said_before.push_back(a->err().size());
    ch.kill();
    agents[1]->signal(SIGKILL);
    agents[1]->wait(std::chrono::seconds(10));
    for (int n : {0, 2, 3}) {
        const auto& a = agents[static_cast<std::size_t>(n)];
        EXPECT_GE(wait_until(
                      [&] {
                          return a->err().find("rows wait in the local store",
                                               said_before[static_cast<std::size_t>(n)]) != std::string::npos;
                      },
                      std::chrono::seconds(30))
                      .count(),
                  0)
            << "agent " << n << " never found ClickHouse gone; stderr: " << a->err();
    }
    agents[1] = std::make_unique<Background>(cluster_agent_args(tmp / "node1", url, 1), tmp.path(), env);
    ASSERT_TRUE(ch.start()) << "clickhouse-server did not restart: " << ch.log();
    ch.scalar("SYSTEM STOP MERGES");

    for (auto& s : sims) ASSERT_EQ(s->wait(std::chrono::seconds(120)), 0) << s->err();

    // Every node's store, read through the contract's query output.
    std::vector<std::string> local;
    for (int n = 0; n < kNodes; ++n) {
        // Caught up and drained: every rank's last step is in the node's store (the restarted agent reads the
        // backlog first) and its spool has nothing left to ship.
        const std::string db = tmp / ("node" + std::to_string(n)) + "/store.db";
        auto count = [&](const std::string& sql) {
            std::string err;
            auto rows = sqlite_rows(db, sql, err);
            return rows.empty() ? -1LL : std::stoll(rows[0][0]);
        };
        EXPECT_GE(wait_until(
                      [&] {
                          return count("SELECT count(*) FROM run_range WHERE last_step >= " +
                                       std::to_string(kSteps - 1)) == kRanksPerNode &&
                                 count("SELECT count(*) FROM ship_journal") == 0;
                      },
                      std::chrono::seconds(60))
                      .count(),
                  0)
            << "node " << n
            << " did not catch up and drain its spool; stderr: " << agents[static_cast<std::size_t>(n)]->err();
    }
    // Stop the agents: a stop exits 0 within 2 s. What it judged at the end (groups complete only now) ships with
    // it while that takes less than the stop's grace (0.8 s); what is left waits in the node's store and ships with
    // the next run on it (under TSan about half of the last anomalies did): a one-shot ingest with the same --db.
    for (auto& a : agents) a->signal(SIGTERM);
    for (int n = 0; n < kNodes; ++n) {
        const auto& a = agents[static_cast<std::size_t>(n)];
        EXPECT_EQ(a->wait(std::chrono::seconds(60)), 0)
            << "agent " << n << "; stdout: " << a->out() << "\nstderr: " << a->err();
        const std::string node_dir = tmp / ("node" + std::to_string(n));
        const auto rest = run({program("msmon"), "ingest", node_dir + "/job", "--db", node_dir + "/store.db", "--sink",
                               url, "--job", kJob, "--node", "node" + std::to_string(n)},
                              env);
        EXPECT_EQ(rest.exit_code, 0) << "node " << n << ": " << rest.err;
    }
    for (int n = 0; n < kNodes; ++n) {
        const auto r = run({program("msmon"), "query", "--db", tmp / ("node" + std::to_string(n)) + "/store.db"}, env);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const auto lines = sorted_lines(r.out);
        EXPECT_GT(lines.size(), 1000u) << "node " << n;
        local.insert(local.end(), lines.begin(), lines.end());
    }
    std::sort(local.begin(), local.end());

    // 1. Not even a physical duplicate: the agents never re-sent a row (rows before FINAL == after FINAL).
    const auto physical = std::stoll(ch.scalar("SELECT count() FROM msmon_it.points WHERE job = '" + kJob + "'"));
    const auto logical = std::stoll(ch.scalar("SELECT count() FROM msmon_it.points FINAL WHERE job = '" + kJob + "'"));
    EXPECT_EQ(physical, logical);
    EXPECT_EQ(static_cast<std::size_t>(logical), local.size());
    EXPECT_EQ(ch.scalar("SELECT uniqExact(rank) FROM msmon_it.points"), "32");

    // Merged now (points only: the anomalies' physical count is checked below): a read with FINAL over the few
    // hundred parts the stopped merges left goes past the test server's memory limit.
    ch.scalar("SYSTEM START MERGES msmon_it.points");
    ch.scalar("OPTIMIZE TABLE msmon_it.points FINAL");

    // 2. ClickHouse holds exactly the union, value by value (every value, not a sample), ranks 0..31.
    const auto remote = run({program("msmon"), "query", "--store", url, "--job", kJob}, env);
    ASSERT_EQ(remote.exit_code, 0) << remote.err;
    const auto in_clickhouse = sorted_lines(remote.out);
    EXPECT_EQ(in_clickhouse.size(), local.size());
    EXPECT_TRUE(in_clickhouse == local) << "ClickHouse and the union of the local stores differ";
    std::printf("[ shipped  ] %zu values from %d nodes\n", local.size(), kNodes);

    // 2b. The Overview's per-rank series over every parameter come from the agents' shipped step aggregates
    // (rank_steps): step for step the same as each node's own store gives, for every kind and op.
    {
        auto remote_reader = open_clickhouse_reader(ch.target("msmon_it"), kJob);
        // Without a job: the one the agents reported in most recently, this one.
        EXPECT_EQ(open_clickhouse_reader(ch.target("msmon_it"), "")->catalog().ranks, remote_reader->catalog().ranks);
        std::vector<std::unique_ptr<Reader>> node_readers;
        for (int n = 0; n < kNodes; ++n)
            node_readers.push_back(open_sqlite_reader(tmp / ("node" + std::to_string(n)) + "/store.db"));
        std::size_t compared = 0;
        for (const auto& [kind, ops] : remote_reader->catalog().kinds)
            for (const auto& op : ops) {
                std::map<int, std::vector<StepValue>> expected;
                for (auto& node : node_readers)
                    for (auto& rs : node->rank_series({kind, op, std::nullopt, 0, {}})) expected[rs.rank] = rs.points;
                std::map<int, std::vector<StepValue>> got;
                for (auto& rs : remote_reader->rank_series({kind, op, std::nullopt, 0, {}})) got[rs.rank] = rs.points;
                ASSERT_EQ(got.size(), expected.size()) << kind << " " << op;
                for (const auto& [rank, points] : expected) {
                    const auto& g = got[rank];
                    ASSERT_EQ(g.size(), points.size()) << kind << " " << op << " rank " << rank;
                    for (std::size_t i = 0; i < points.size(); ++i) {
                        ASSERT_EQ(g[i].step, points[i].step);
                        if (!(std::isnan(g[i].value) && std::isnan(points[i].value))) {
                            ASSERT_DOUBLE_EQ(g[i].value, points[i].value)
                                << kind << " " << op << " rank " << rank << " step " << points[i].step;
                        }
                        ++compared;
                    }
                }
            }
        EXPECT_GT(compared, 10000u);
        std::printf("[ overview ] %zu (rank, step) aggregates equal the nodes' own\n", compared);
    }

    // 3. Anomalies: the same set through the contract's JSON (every node's NaN from its rank 3 included).
    std::size_t local_anomalies = 0;
    for (int n = 0; n < kNodes; ++n) {
        std::string err;
        auto rows = sqlite_rows(tmp / ("node" + std::to_string(n)) + "/store.db", "SELECT count(*) FROM anomaly", err);
        local_anomalies += std::stoul(rows.at(0).at(0));
    }
    EXPECT_GT(local_anomalies, 0u);
    EXPECT_EQ(ch.scalar("SELECT count() FROM msmon_it.anomalies FINAL"), std::to_string(local_anomalies));
    EXPECT_EQ(ch.scalar("SELECT count() FROM msmon_it.anomalies"), std::to_string(local_anomalies));
    // Each node's NaN on its rank 3 reaches all 8 of its ranks through the all-reduce: all 32 ranks.
    EXPECT_EQ(ch.scalar("SELECT uniqExact(rank) FROM msmon_it.anomalies WHERE rule = 'AnomalyNan'"), "32");

    // 4. The outage was seen (and survived) by the agents.
    std::size_t saw_outage = 0;
    for (auto& a : agents) saw_outage += a->err().find("rows wait in the local store") != std::string::npos;
    EXPECT_GT(saw_outage, 0u) << "no agent noticed ClickHouse was down: the test did not test the outage";

    // 5. msmon-tui over ClickHouse shows all 32 ranks.
    const auto tui =
        run({program("msmon-tui"), "--store", url, "--job", kJob, "--snapshot", "overview", "--size", "120x45"}, env);
    ASSERT_EQ(tui.exit_code, 0) << tui.err;
    EXPECT_NE(tui.out.find(" 32 ranks "), std::string::npos) << tui.out;
    for (int r = 0; r < kNodes * kRanksPerNode; ++r) {  // a row per rank: " 7 ..." or, marked, "!3 ..."
        const std::string label = std::to_string(r) + " ";
        EXPECT_TRUE(tui.out.find("\n " + label) != std::string::npos ||
                    tui.out.find("\n!" + label) != std::string::npos)
            << "rank " << r << " missing\n"
            << tui.out;
    }

    // 6. node_exporter serves node 0's gauges; promtool accepts them.
    NodeExporterTestServer exporter(tmp / "node0/prom", tmp.path());
    ASSERT_TRUE(exporter.ready()) << "prometheus-node-exporter did not start";
    const std::string metrics = exporter.metrics();
    const std::string last =
        "msmon_rank_last_step{job_id=\"" + kJob + "\",node=\"node0\",rank=\"3\"} " + std::to_string(kSteps - 1);
    EXPECT_NE(metrics.find(last), std::string::npos) << metrics.substr(0, 3000);
    EXPECT_NE(
        metrics.find("msmon_rank_anomalies{job_id=\"" + kJob + "\",node=\"node0\",rank=\"3\",rule=\"AnomalyNan\"}"),
        std::string::npos);
    EXPECT_EQ(metrics.find("msmon_rank_last_step{job_id=\"" + kJob + "\",node=\"node0\",rank=\"8\"}"),
              std::string::npos)
        << "node 0's file holds only node 0's ranks";
    write_file(tmp / "scraped.prom", metrics);
    const auto check = run({"/bin/sh", "-c", find_installed("promtool") + " check metrics < " + tmp / "scraped.prom"});
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

TEST(ClickHouseCluster, example_alert_rules_pass_promtool) {
    const std::string promtool = find_installed("promtool");
    if (promtool.empty())
        MSMON_SKIP_UNLESS_REQUIRED("promtool is not installed (scripts/setup-cluster-deps.sh installs it)");
    const auto r = run({promtool, "check", "rules", std::string(MSMON_SOURCE_DIR) + "/configs/msmon-alerts.yml"});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("SUCCESS: 4 rules found"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace msmon::test
