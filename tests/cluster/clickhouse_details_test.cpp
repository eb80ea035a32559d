// Parse issues, file counts, module structure and stack info, shipped by the agents (msmon ingest --follow
// --sink) and read back through the Reader over ClickHouse, against a real clickhouse-server started by the
// test on loopback: 2 nodes of 2 ranks with malformed CSV lines, module_struct.json and stack_info.csv.
// Mid-run one agent is killed and restarted while its files grow, and the other node's module_struct.json is
// rewritten. ClickHouse must answer issues, summary counts and module_info exactly as the nodes' own stores
// do, nothing sent twice.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <tuple>

#include "store/clickhouse/clickhouse_reader.hpp"
#include "store/clickhouse/clickhouse_schema.hpp"
#include "store/sqlite_handle.hpp"
#include "tests/support/cluster_services.hpp"
#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

namespace fs = std::filesystem;

constexpr int kNodes = 2;
constexpr int kRanksPerNode = 2;
const std::string kJob = "job-details";

std::string run_dir(const std::string& node_dir, int rank) {
    return node_dir + "/job/monitor_output/Nov22_13-55-47-rank" + std::to_string(rank) + "-426b92d" +
           std::to_string(rank);
}

std::string struct_file(const std::string& node_dir, int rank) {
    return node_dir + "/job/monitor_output/module_struct/rank" + std::to_string(rank) + "/module_struct.json";
}

// A rank's module_struct.json: a root, fc1 and fc2 under msprobe's "0:" prefix, and one module without it.
std::string module_struct(int rank, const std::string& fc1_size) {
    const std::string r = std::to_string(rank);
    return "{\n  \"0:\": {\"input\": {\"config\": \"list[1]\"}},\n"
           "  \"0:layers.0.fc1\": {\"output\": {\"config\": \"tensor\", \"tensor\": \"size=(" +
           fc1_size + ", " + r +
           "), dtype=torch.float32\"}},\n"
           "  \"0:layers.0.fc2\": {\"output\": {\"config\": \"tensor\", \"tensor\": \"size=(32, " +
           r + ")\"}},\n  \"decoder\": {\"output\": {\"config\": \"tuple[" + r + "]\"}}\n}";
}

// stack_info.csv: fc1 and embed (a stack without a structure), quoted multi-line stacks naming the rank.
std::string stack_info(int rank) {
    const std::string r = std::to_string(rank);
    return "module_name,stack_info\n"
           "0:layers.0.fc1,\"File model.py, line " +
           r +
           ", in forward, \n return self.fc1(x) \nFile train.py, line 73, in main, \n loss = model(x) "
           "\n\"\n" +
           "0:embed,\"File model.py, line 4" + r + ", in forward, \n x = self.embed(x) \n\"\n";
}

// Line 2 is good; 3 has too few fields, 4 a non-numeric op, 5 a non-integer step.
std::string csv_with_bad_lines(int rank) {
    const std::string r = std::to_string(rank);
    return "vpp_stage,name,step,norm,min,max,shape,dtype\n"
           "0,layers.0.fc1.weight,0,0.5,-0.1,0.1,[4],torch.float32\n"
           "0,layers.0.fc1.weight,3,0.1,0.2,[4],torch.float32\n"
           "0,layers.0.fc2.weight,0,abc" +
           r +
           ",-0.125,0.25,[4],torch.float32\n"
           "0,layers.0.fc2.weight,1.5,0.3,-0.125,0.25,[4],torch.float32\n";
}

void write_node(const std::string& node_dir, int node) {
    for (int k = 0; k < kRanksPerNode; ++k) {
        const int rank = node * kRanksPerNode + k;
        fs::create_directories(run_dir(node_dir, rank));
        write_file(run_dir(node_dir, rank) + "/grad_reduced_0-0.csv", csv_with_bad_lines(rank));
        write_file(run_dir(node_dir, rank) + "/stack_info.csv", stack_info(rank));
        fs::create_directories(fs::path(struct_file(node_dir, rank)).parent_path());
        write_file(struct_file(node_dir, rank), module_struct(rank, "8"));
    }
}

std::vector<std::string> details_agent_args(const std::string& node_dir, const std::string& url, int node) {
    return agent_args(node_dir, url, kJob, node, 200);
}

using Issue = std::tuple<std::string, std::int64_t, std::string, std::string>;

std::vector<Issue> as_tuples(const std::vector<IssueRecord>& issues) {
    std::vector<Issue> out;
    for (const auto& i : issues) out.emplace_back(i.path, i.line, i.reason, i.excerpt);
    return out;
}

std::string describe(const std::vector<Issue>& issues) {
    std::ostringstream s;
    for (const auto& [path, line, reason, excerpt] : issues)
        s << "  " << path << ":" << line << ": " << reason << " [" << excerpt << "]\n";
    return s.str();
}

std::string describe(const Reader::ModuleInfo& m) {
    return "{module '" + m.module + "', structure '" + m.structure + "', stack '" + m.stack + "'}";
}

const std::vector<std::string> kProbeNames = {
    "layers.0.fc1.weight", "layers.0.fc1", "layers.0.fc2.weight", "embed.weight", "decoder.output", "layers.0", "",
    "missing.weight"};
const std::vector<int> kProbeRanks = {0, 1, 2, 3, 7};

// What the nodes' own stores answer, and whether ClickHouse answers the same: the union of their issues (as a
// multiset), summed counts, and module_info for every probe (a rank is asked of the node that holds it).
struct Comparison {
    std::vector<Issue> local_issues, remote_issues;
    std::int64_t local_files = 0, remote_files = -1, local_issue_count = 0, remote_issue_count = -1;
    std::vector<std::string> module_mismatches;
    std::string error;

    bool same() const {
        return error.empty() && local_issues == remote_issues && local_files == remote_files &&
               local_issue_count == remote_issue_count && module_mismatches.empty();
    }
    std::string report() const {
        std::ostringstream s;
        if (!error.empty()) s << "error: " << error << "\n";
        s << "issues: local " << local_issues.size() << ", ClickHouse " << remote_issues.size() << "\nlocal:\n"
          << describe(local_issues) << "ClickHouse:\n"
          << describe(remote_issues) << "summary files: local " << local_files << ", ClickHouse " << remote_files
          << "; summary issues: local " << local_issue_count << ", ClickHouse " << remote_issue_count << "\n";
        for (const auto& m : module_mismatches) s << m << "\n";
        return s.str();
    }
};

Comparison compare(const TempDir& tmp, const ClickHouseTarget& target) {
    Comparison c;
    try {
        std::vector<std::unique_ptr<Reader>> local;
        for (int n = 0; n < kNodes; ++n) {
            local.push_back(open_sqlite_reader(tmp / ("node" + std::to_string(n)) + "/store.db"));
            const auto issues = as_tuples(local.back()->issues(1000));
            c.local_issues.insert(c.local_issues.end(), issues.begin(), issues.end());
            const StoreSummary s = local.back()->summary();
            c.local_files += s.files;
            c.local_issue_count += s.issues;
        }
        auto remote = open_clickhouse_reader(target, kJob);
        c.remote_issues = as_tuples(remote->issues(1000));
        const StoreSummary s = remote->summary();
        c.remote_files = s.files;
        c.remote_issue_count = s.issues;
        std::sort(c.local_issues.begin(), c.local_issues.end());
        std::sort(c.remote_issues.begin(), c.remote_issues.end());
        for (const int rank : kProbeRanks) {
            Reader& node = *local[static_cast<std::size_t>(std::min(rank / kRanksPerNode, kNodes - 1))];
            for (const auto& name : kProbeNames) {
                const auto want = node.module_info(rank, name);
                const auto got = remote->module_info(rank, name);
                if (got.module != want.module || got.structure != want.structure || got.stack != want.stack)
                    c.module_mismatches.push_back("module_info(" + std::to_string(rank) + ", '" + name + "'): local " +
                                                  describe(want) + ", ClickHouse " + describe(got));
            }
        }
    } catch (const std::exception& e) {
        c.error = e.what();
    }
    return c;
}

TEST(ClickHouseDetails, issues_file_counts_and_module_info_read_back_from_clickhouse_as_each_node_answers) {
    if (find_installed("clickhouse-server").empty())
        MSMON_SKIP_UNLESS_REQUIRED("clickhouse-server is not installed (scripts/setup-cluster-deps.sh installs it)");
    TempDir tmp;
    ClickHouseTestServer ch(tmp / "clickhouse");
    ASSERT_TRUE(ch.ready()) << "clickhouse-server did not start: " << ch.log();
    const std::string url = ch.url("msmon_details");
    const ClickHouseTarget target = ch.target("msmon_details");
    const auto env = isolated_env(tmp);
    // Merges off (as in the cluster test): a re-sent row must stay visible to the physical count below.
    ensure_clickhouse_schema(ClickHouseClient(target));
    ch.scalar("SYSTEM STOP MERGES");

    std::vector<std::unique_ptr<Background>> agents;
    for (int n = 0; n < kNodes; ++n) {
        const std::string dir = tmp / ("node" + std::to_string(n));
        write_node(dir, n);
        agents.push_back(std::make_unique<Background>(details_agent_args(dir, url, n), tmp.path(), env));
    }
    auto settled = [&] {
        const Comparison c = compare(tmp, target);
        return c.same() && c.local_issue_count == kNodes * kRanksPerNode * 3;
    };
    ASSERT_GE(wait_until(settled, std::chrono::seconds(60)).count(), 0)
        << "ClickHouse does not answer as the nodes do:\n"
        << compare(tmp, target).report() << "agent 0 stderr: " << agents[0]->err();

    // The Reader's answers are not empty: fc1 has a structure and a stack on every rank.
    {
        auto remote = open_clickhouse_reader(target, kJob);
        const auto fc1 = remote->module_info(3, "layers.0.fc1.weight");
        EXPECT_EQ(fc1.module, "0:layers.0.fc1");
        EXPECT_NE(fc1.structure.find("size=(8, 3)"), std::string::npos) << describe(fc1);
        EXPECT_NE(fc1.stack.find("File model.py, line 3, in forward"), std::string::npos) << describe(fc1);
        EXPECT_EQ(remote->module_info(2, "decoder.output").module, "decoder");
        EXPECT_GE(remote->summary().files, kNodes * kRanksPerNode * 2);  // at least each rank's two CSVs
    }

    // Mid-run: node 0's agent dies (SIGKILL) and its CSV grows meanwhile (a good line, two bad ones: lines
    // 6-8); node 1 rewrites rank 3's module_struct.json.
    agents[0]->signal(SIGKILL);
    agents[0]->wait(std::chrono::seconds(10));
    // The new issues are shipped in a later second than the first ones (ClickHouse stamps `shipped` to the second).
    ASSERT_GE(wait_until(
                  [&] {
                      return ch.scalar("SELECT now() > max(shipped) FROM msmon_details.issues WHERE job = '" + kJob +
                                       "'") == "1";
                  },
                  std::chrono::seconds(5))
                  .count(),
              0);
    append_file(run_dir(tmp / "node0", 0) + "/grad_reduced_0-0.csv",
                "0,layers.0.fc1.weight,1,0.6,-0.1,0.1,[4],torch.float32\n"
                "reduce_scatter,0.5,1,0.1,0.2,[4],torch.float32,0.5,0.1,0.2,[4],torch.float32\n"
                "0,layers.0.fc2.weight,1,0.7,-0.1,0.1,[4],torch.float32,extra\n");
    write_file(struct_file(tmp / "node1", 3), module_struct(3, "4096"));
    agents[0] = std::make_unique<Background>(details_agent_args(tmp / "node0", url, 0), tmp.path(), env);

    auto settled_again = [&] {
        const Comparison c = compare(tmp, target);
        return c.same() && c.local_issue_count == kNodes * kRanksPerNode * 3 + 2 &&
               open_clickhouse_reader(target, kJob)->module_info(3, "layers.0.fc1").structure.find("4096") !=
                   std::string::npos;
    };
    EXPECT_GE(wait_until(settled_again, std::chrono::seconds(60)).count(), 0)
        << "after the restart and the rewrite, ClickHouse does not answer as the nodes do:\n"
        << compare(tmp, target).report() << "agent 0 stderr: " << agents[0]->err();
    for (auto& a : agents) a->signal(SIGTERM);
    for (auto& a : agents) EXPECT_EQ(a->wait(std::chrono::seconds(60)), 0) << a->err();

    // 1. Everything, once more after the agents stopped: issues, counts, module_info for every probe.
    const Comparison c = compare(tmp, target);
    EXPECT_TRUE(c.same()) << c.report();
    EXPECT_EQ(c.remote_issue_count, kNodes * kRanksPerNode * 3 + 2);

    // 2. Newest first: the two issues node 0 wrote last lead, in its own store's order (newest line first).
    auto remote = open_clickhouse_reader(target, kJob);
    const auto newest = as_tuples(remote->issues(2));
    const auto node0_newest = as_tuples(open_sqlite_reader(tmp / "node0/store.db")->issues(2));
    EXPECT_EQ(newest, node0_newest) << "ClickHouse:\n" << describe(newest) << "node 0:\n" << describe(node0_newest);
    ASSERT_EQ(newest.size(), 2u);
    EXPECT_EQ(std::get<1>(newest[0]), 8);
    EXPECT_EQ(std::get<1>(newest[1]), 7);

    // 3. Not one issue stored twice, even across the SIGKILL (merges are off: rows before FINAL == after).
    const std::string job = "WHERE job = '" + kJob + "'";
    EXPECT_EQ(ch.scalar("SELECT count() FROM msmon_details.issues " + job),
              ch.scalar("SELECT count() FROM msmon_details.issues FINAL " + job));
    EXPECT_EQ(ch.scalar("SELECT count() FROM msmon_details.node_files FINAL " + job), std::to_string(kNodes));

    // 4. The rewrite is a new generation of node 1's modules; rank 3 answers with the new structure, rank 2
    // too.
    EXPECT_GE(std::stoll(ch.scalar("SELECT max(generation) FROM msmon_details.modules " + job + " AND node = 'node1'")),
              2);
    EXPECT_NE(remote->module_info(3, "layers.0.fc1.weight").structure.find("size=(4096, 3)"), std::string::npos);
    EXPECT_NE(remote->module_info(2, "layers.0.fc1.weight").structure.find("size=(8, 2)"), std::string::npos);

    // 5. INSERTs that landed but whose answers were lost: node 1's marks fall back to before its issues and
    // modules, and its agent runs once more. Reconciling at start, it sends no issue again.
    {
        Connection store(tmp / "node1/store.db", Connection::Mode::read_write_create);
        store.exec("UPDATE ship_mark SET issue_id = 0, module_hash = 0, module_gen = 0");
    }
    auto args = details_agent_args(tmp / "node1", url, 1);
    args.erase(std::find(args.begin(), args.end(), "--follow"));
    const auto once = run(args, env);
    ASSERT_EQ(once.exit_code, 0) << once.err;
    EXPECT_EQ(ch.scalar("SELECT count() FROM msmon_details.issues " + job),
              std::to_string(kNodes * kRanksPerNode * 3 + 2))
        << "an issue ClickHouse already held was sent again";
    const Comparison after_reconcile = compare(tmp, target);
    EXPECT_TRUE(after_reconcile.same()) << after_reconcile.report();
}

}  // namespace
}  // namespace msmon::test
