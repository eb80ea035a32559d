// The CLI contract of DESIGN.md: --help, exit codes (0 ok, 1 runtime failure, 2 usage error), diagnostics on
// stderr, JSON on stdout, the default store under $XDG_CACHE_HOME, and one writer per store.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "cli/command_table.hpp"
#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

const std::string kHeader = "vpp_stage,name,step,norm,min,max,mean,shape,dtype\n";

// A small v1 job: two ranks, two steps, with nan/inf and text ops.
std::string make_job(const TempDir& tmp) {
    const std::string job = tmp / "job";
    const std::string r0 = job + "/monitor_output/Nov22_13-55-47-rank0-426b92d1";
    const std::string r1 = job + "/monitor_output/Nov22_13-55-48-rank1-9f8e7d6c";
    fs::create_directories(r0);
    fs::create_directories(r1);
    write_file(r0 + "/grad_reduced_0-1.csv", kHeader +
                                                 "0,embed.weight,0,1.5,-0.25,0.25,0.001,\"[16, 8]\",torch.float32\n" +
                                                 "0,embed.weight,1,nan,-inf,inf,nan,\"[16, 8]\",torch.float32\n");
    write_file(r1 + "/grad_reduced_0-1.csv", kHeader +
                                                 "0,embed.weight,0,2.5,-0.5,0.5,1e-06,\"[16, 8]\",torch.float32\n" +
                                                 "0,embed.weight,1,3.5,-0.75,0.75,-0.0,\"[16, 8]\",torch.float32\n");
    return job;
}

// Option names (and whether they take a value) from a command's --help text.
std::map<std::string, bool> help_options(const std::string& help) {
    std::map<std::string, bool> out;
    std::istringstream in(help);
    const std::regex line_re(R"(^\s+(?:-h, )?(--[a-z][a-z0-9-]*)( [^ ]+)?(\s|$))");
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (std::regex_search(line, m, line_re) && m[1] != "--help") out[m[1]] = m[2].matched;
    }
    return out;
}

const std::vector<std::string> kCommands = {"ingest", "query", "simulate"};

// True if `msmon CMD OPTION ...` gets past OPTION: the parser then complains about the unknown option after
// it.
bool option_accepted(const std::string& cmd, const std::string& option, const TempDir& tmp) {
    auto r = run({program("msmon"), cmd, option, "1", "--zz-not-an-option"}, isolated_env(tmp));
    return r.exit_code == 2 && r.err.find("--zz-not-an-option") != std::string::npos &&
           r.err.find("'" + option + "'") == std::string::npos;
}

TEST(CliContract, top_level_help_exits_0_and_no_command_is_a_usage_error) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    auto help = run({program("msmon"), "--help"}, env);
    EXPECT_EQ(help.exit_code, 0);
    for (const CliCommand& c : cli_commands())
        EXPECT_NE(help.out.find("  " + c.name() + " "), std::string::npos) << c.name() << " not in --help";
    auto bare = run({program("msmon")}, env);
    EXPECT_EQ(bare.exit_code, 2);
    EXPECT_FALSE(bare.err.empty()) << "usage should go to stderr";
    EXPECT_TRUE(bare.out.empty());
    auto unknown = run({program("msmon"), "frobnicate"}, env);
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_NE(unknown.err.find("frobnicate"), std::string::npos) << unknown.err;
}

TEST(CliContract, every_command_help_exits_0_and_lists_every_option_it_accepts) {
    TempDir tmp;
    // Every option the contract names for any command, plus everything any --help prints.
    std::set<std::string> candidates = {
        "--db",      "--follow",   "--poll-ms",    "--monitor-config", "--json",   "--rank",
        "--kind",    "--name",     "--op",         "--steps",          "--format", "--ranks",
        "--step-ms", "--params",   "--faults",     "--logs",           "--health", "--source",
        "--topk",    "--trend-db", "--first-step", "--record-steps",   "--xy",     "--seed"};
    std::map<std::string, std::map<std::string, bool>> helps;
    for (const auto& cmd : kCommands) {
        auto r = run({program("msmon"), cmd, "--help"}, isolated_env(tmp));
        EXPECT_EQ(r.exit_code, 0) << cmd;
        EXPECT_EQ(r.out.rfind("usage: msmon " + cmd, 0), 0u) << r.out;
        helps[cmd] = help_options(r.out);
        EXPECT_FALSE(helps[cmd].empty()) << cmd << " --help lists no options:\n" << r.out;
        for (const auto& [opt, _] : helps[cmd]) candidates.insert(opt);
    }
    for (const auto& cmd : kCommands) {
        for (const auto& opt : candidates) {
            const bool listed = helps[cmd].count(opt) != 0;
            const bool accepted = option_accepted(cmd, opt, tmp);
            EXPECT_EQ(listed, accepted) << "msmon " << cmd << " " << opt << ": "
                                        << (listed ? "listed in --help but rejected" : "accepted but not in --help");
        }
    }
}

TEST(CliContract, unknown_option_is_a_usage_error_naming_the_option_on_stderr) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string job = make_job(tmp);
    for (const auto& cmd : kCommands) {
        auto r = run({program("msmon"), cmd, job, "--no-such-option"}, env);
        EXPECT_EQ(r.exit_code, 2) << cmd;
        EXPECT_NE(r.err.find("--no-such-option"), std::string::npos) << cmd << " stderr: " << r.err;
        EXPECT_TRUE(r.out.empty()) << cmd << " printed to stdout: " << r.out;
    }
}

TEST(CliContract, missing_dir_is_a_usage_error) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    for (const std::vector<std::string>& argv : {std::vector<std::string>{program("msmon"), "ingest"},
                                                 std::vector<std::string>{program("msmon"), "ingest", "--json"},
                                                 std::vector<std::string>{program("msmon"), "query"},
                                                 std::vector<std::string>{program("msmon"), "query", "--rank", "0"},
                                                 std::vector<std::string>{program("msmon"), "simulate"}}) {
        auto r = run(argv, env);
        EXPECT_EQ(r.exit_code, 2) << argv[1] << " " << (argv.size() > 2 ? argv[2] : "");
        EXPECT_FALSE(r.err.empty());
    }
}

TEST(CliContract, bad_option_values_are_usage_errors_and_missing_stores_or_folders_are_runtime_failures) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string job = make_job(tmp);
    const std::string db = tmp / "store.db";
    ASSERT_EQ(run({program("msmon"), "ingest", job, "--db", db}, env).exit_code, 0);
    ASSERT_EQ(run({program("msmon"), "query", "--db", db}, env).exit_code, 0) << "the baseline query must work";

    struct Case {
        std::vector<std::string> args;
        int code;
    };
    const std::string absent_db = tmp / "nonexistent.db";
    const std::vector<Case> cases = {
        {{"query", "--db", db, "--steps", "5-3"}, 2},
        {{"query", "--db", db, "--name", "("}, 2},
        {{"query", "--db", db, "--format", "xml"}, 2},
        {{"query", "--db", db, "--rank", "x"}, 2},
        {{"query", job, "--db", db}, 2},
        {{"query", tmp / "no-such-folder"}, 1},
        {{"query", "--db", absent_db}, 1},
        {{"ingest", tmp / "no-such-folder", "--db", tmp / "other.db"}, 1},
        {{"ingest", job, "--db", db, "--poll-ms", "0"}, 2},
        {{"simulate", tmp / "sim-out", "--faults", "boom@1"}, 2},
        {{"simulate", tmp / "sim-out", "--ranks", "0"}, 2},
    };
    for (const auto& c : cases) {
        std::vector<std::string> argv = {program("msmon")};
        argv.insert(argv.end(), c.args.begin(), c.args.end());
        auto r = run(argv, env);
        std::string shown;
        for (const auto& a : c.args) shown += " " + a;
        EXPECT_EQ(r.exit_code, c.code) << "msmon" << shown << "\nstderr: " << r.err;
        EXPECT_FALSE(r.err.empty()) << "msmon" << shown << ": no diagnostic on stderr";
        EXPECT_TRUE(r.out.empty()) << "msmon" << shown << ": printed to stdout: " << r.out;
    }
    EXPECT_FALSE(fs::exists(absent_db)) << "query --db created a store";
    EXPECT_FALSE(fs::exists(tmp / "sim-out")) << "simulate wrote output despite a usage error";
}

// --rank past 32 bits wrapped: `--rank 4294967296` printed rank 0's values. A rank is a whole number from 0 to
// 2147483647, or it is refused by name, in every command that takes one.
TEST(CliContract, a_rank_past_32_bits_or_below_0_is_refused_by_name_not_wrapped) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string db = tmp / "store.db";
    ASSERT_EQ(run({program("msmon"), "ingest", make_job(tmp), "--db", db}, env).exit_code, 0);
    for (const std::string rank : {"4294967296", "2147483648", "-1", "99999999999999999999", "1x"}) {
        for (const std::vector<std::string>& cmd :
             {std::vector<std::string>{"query", "--db", db}, std::vector<std::string>{"anomalies", "--db", db},
              std::vector<std::string>{"health", "--db", db, "--run-config"}}) {
            std::vector<std::string> argv = {program("msmon")};
            argv.insert(argv.end(), cmd.begin(), cmd.end());
            argv.insert(argv.end(), {"--rank", rank});
            const auto r = run(argv, env);
            EXPECT_EQ(r.exit_code, 2) << cmd[0] << " --rank " << rank << ": " << r.out << r.err;
            EXPECT_NE(r.err.find("--rank takes a rank, a whole number from 0 to 2147483647: " + rank + " is not one"),
                      std::string::npos)
                << cmd[0] << ": " << r.err;
            EXPECT_TRUE(r.out.empty()) << cmd[0] << " --rank " << rank << " printed: " << r.out;
        }
    }
    const auto top = run({program("msmon"), "query", "--db", db, "--rank", "2147483647"}, env);
    EXPECT_EQ(top.exit_code, 0) << "the highest rank is a rank, not in this store: " << top.err;
    EXPECT_NE(top.err.find("no rank 2147483647"), std::string::npos) << top.err;
}

TEST(CliContract, query_json_is_one_array_of_contract_objects_matching_the_csv) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string job = make_job(tmp);
    const std::string db = tmp / "store.db";
    ASSERT_EQ(run({program("msmon"), "ingest", job, "--db", db}, env).exit_code, 0);

    auto js = run({program("msmon"), "query", "--db", db, "--format", "json"}, env);
    ASSERT_EQ(js.exit_code, 0) << js.err;
    nlohmann::ordered_json doc;
    ASSERT_NO_THROW(doc = nlohmann::ordered_json::parse(js.out)) << js.out;
    ASSERT_TRUE(doc.is_array());
    std::string error;
    const auto csv = query_rows(db, {}, env, error);
    ASSERT_TRUE(error.empty()) << error;
    ASSERT_EQ(doc.size(), csv.size());
    ASSERT_EQ(csv.size(), 2u * 2u * 6u);  // ranks x steps x ops
    const std::vector<std::string> keys = {"rank", "kind", "vpp_stage", "name", "step", "micro_step", "op", "value"};
    for (std::size_t i = 0; i < doc.size(); ++i) {
        const auto& o = doc[i];
        ASSERT_TRUE(o.is_object());
        std::vector<std::string> got_keys;
        for (const auto& [k, _] : o.items()) got_keys.push_back(k);
        EXPECT_EQ(got_keys, keys) << o.dump();
        const auto& c = csv[i];
        EXPECT_EQ(std::to_string(o["rank"].get<int>()), c.rank);
        EXPECT_EQ(o["kind"], c.kind);
        EXPECT_EQ(o["name"], c.name);
        EXPECT_EQ(std::to_string(o["step"].get<long long>()), c.step);
        EXPECT_TRUE(o["micro_step"].is_null()) << "v1 grad_reduced has no micro_step";
        EXPECT_EQ(o["op"], c.op);
        const auto& v = o["value"];
        if (c.op == "shape" || c.op == "dtype" || c.value == "nan" || c.value == "inf" || c.value == "-inf") {
            ASSERT_TRUE(v.is_string()) << o.dump();
            EXPECT_EQ(v.get<std::string>(), c.value);
        } else {
            ASSERT_TRUE(v.is_number()) << o.dump();
            EXPECT_TRUE(same_number(c.value, v.dump())) << o.dump() << " vs csv " << c.value;
        }
    }
    auto empty = run({program("msmon"), "query", "--db", db, "--format", "json", "--kind", "nothing"}, env);
    ASSERT_EQ(empty.exit_code, 0);
    auto e = nlohmann::json::parse(empty.out, nullptr, false);
    EXPECT_TRUE(e.is_array() && e.empty()) << empty.out;
}

// A filter that matches nothing printed a header alone and exit 0: a typo in a kind looked like an empty store.
// The output stays what it was (scripts read it); stderr names the filter the store has nothing for.
TEST(CliContract, query_that_matches_nothing_says_which_filter_on_stderr) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string job = make_job(tmp);
    const std::string db = tmp / "store.db";
    ASSERT_EQ(run({program("msmon"), "ingest", job, "--db", db}, env).exit_code, 0);
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"--kind", "grad_reducd"},
         "no values match: no kind 'grad_reducd' in the store (kinds: grad_reduced, derived.layer_grad)"},
        {{"--kind", "grad_reduced", "--op", "nrm"}, "no values match: no op 'nrm' for kind grad_reduced (ops: "},
        {{"--op", "nrm"}, "no values match: no op 'nrm' in the store"},
        {{"--rank", "9"}, "no values match: no rank 9 in the store (2 ranks)"},
        {{"--kind", "grad_reduced", "--steps", "500"}, "no values match these filters together"},
    };
    for (const auto& [filters, said] : cases) {
        std::vector<std::string> argv = {program("msmon"), "query", "--db", db};
        argv.insert(argv.end(), filters.begin(), filters.end());
        const auto r = run(argv, env);
        EXPECT_EQ(r.exit_code, 0) << filters[1];
        EXPECT_EQ(r.out, "rank,kind,vpp_stage,name,step,micro_step,op,value\n") << filters[1];
        EXPECT_NE(r.err.find(said), std::string::npos) << filters[1] << ": " << r.err;
    }
    const auto some = run({program("msmon"), "query", "--db", db, "--kind", "grad_reduced"}, env);
    EXPECT_EQ(some.err, "") << "values printed: nothing to say";
}

// One type per field across the commands' JSON: vpp_stage is a number like rank, in query and in anomalies; a value
// with no stage (a MindFormers loss) has null.
TEST(CliContract, json_vpp_stage_is_a_number_in_query_and_anomalies) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    ASSERT_EQ(run({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--steps", "30", "--logs", "--faults",
                   "spike@20"},
                  env)
                  .exit_code,
              0);
    const std::string db = tmp / "store.db";
    ASSERT_EQ(run({program("msmon"), "ingest", tmp / "job", "--db", db}, env).exit_code, 0);
    const auto values = nlohmann::json::parse(
        run({program("msmon"), "query", "--db", db, "--steps", "20", "--format", "json"}, env).out);
    int staged = 0, unstaged = 0;
    for (const auto& v : values) {
        EXPECT_TRUE(v["rank"].is_number_integer()) << v.dump();
        EXPECT_TRUE(v["vpp_stage"].is_number_integer() || v["vpp_stage"].is_null()) << v.dump();
        if (v["kind"] == "loss") {  // MindFormers' values have no stage
            EXPECT_TRUE(v["vpp_stage"].is_null()) << v.dump();
            ++unstaged;
        } else if (v["kind"] == "grad_reduced") {  // msprobe's have
            EXPECT_TRUE(v["vpp_stage"].is_number_integer()) << v.dump();
            ++staged;
        }
    }
    EXPECT_GT(staged, 0);
    EXPECT_GT(unstaged, 0);
    const auto anomalies =
        nlohmann::json::parse(run({program("msmon"), "anomalies", "--db", db, "--format", "json"}, env).out);
    ASSERT_FALSE(anomalies.empty());
    for (const auto& a : anomalies) {  // detected on msprobe's values: their stage; on MindFormers': null
        EXPECT_TRUE(a["vpp_stage"].is_number_integer() || a["vpp_stage"].is_null()) << a.dump();
        if (a["kind"] == "grad_unreduced") {
            EXPECT_TRUE(a["vpp_stage"].is_number_integer()) << a.dump();
        }
    }
}

TEST(CliContract, query_prints_negative_zero_so_that_it_reads_back_as_negative_zero) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string run_dir = tmp / "job/monitor_output/Nov22_13-55-47-rank0-426b92d1";
    fs::create_directories(run_dir);
    // pandas rounds tiny negatives to -0.0 in msprobe's CSVs; it is a distinct double from 0.0.
    write_file(run_dir + "/grad_reduced_0-0.csv", kHeader + "0,w,0,0.5,-0.0,0.0,-0.0,[4],torch.float32\n");
    const std::string db = tmp / "store.db";
    ASSERT_EQ(run({program("msmon"), "ingest", tmp / "job", "--db", db}, env).exit_code, 0);
    std::string error;
    const auto rows = query_rows(db, {}, env, error);
    ASSERT_TRUE(error.empty()) << error;
    std::map<std::string, std::string> by_op;
    for (const auto& r : rows) by_op[r.op] = r.value;
    EXPECT_TRUE(same_number(by_op["min"], "-0.0")) << "min printed as '" << by_op["min"] << "'";
    EXPECT_TRUE(same_number(by_op["mean"], "-0.0")) << "mean printed as '" << by_op["mean"] << "'";
    EXPECT_TRUE(same_number(by_op["max"], "0.0")) << "max printed as '" << by_op["max"] << "'";
}

// ---- default store location ----------------------------------------------------------------------------

std::vector<std::string> store_files(const std::string& cache_msmon) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(cache_msmon, ec))
        if (e.path().extension() == ".db") out.push_back(e.path().filename().string());
    return out;
}

TEST(CliContract, default_store_is_one_hashed_file_under_xdg_cache_and_nothing_is_written_inside_dir) {
    TempDir tmp;
    const std::map<std::string, std::string> env = {{"XDG_CACHE_HOME", tmp / "cache"},
                                                    {"XDG_STATE_HOME", tmp / "state"}};
    const std::string job = make_job(tmp);
    const std::string before = tree_listing(job);
    std::this_thread::sleep_for(milliseconds(20));  // paces the input: a write inside DIR would show as a new mtime

    auto ingest = run({program("msmon"), "ingest", job + "/", "--json"}, env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    auto stores = store_files(tmp / "cache/msmon");
    ASSERT_EQ(stores.size(), 1u);
    EXPECT_TRUE(std::regex_match(stores[0], std::regex("^[0-9a-f]{16}\\.db$"))) << stores[0];
    const std::string store = tmp / ("cache/msmon/" + stores[0]);
    const auto j = nlohmann::json::parse(ingest.out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << ingest.out;
    EXPECT_EQ(j.value("store", ""), store);

    auto q = run({program("msmon"), "query", job}, env);
    ASSERT_EQ(q.exit_code, 0) << q.err;
    std::string error;
    const auto rows = parse_query_csv(q.out, error);
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_EQ(rows.size(), 24u);
    EXPECT_EQ(store_files(tmp / "cache/msmon").size(), 1u) << "query DIR used another store than ingest DIR";
    auto by_db = run({program("msmon"), "query", "--db", store}, env);
    EXPECT_EQ(by_db.out, q.out) << "query DIR and query --db <default store> differ";

    EXPECT_EQ(tree_listing(job), before) << "msmon wrote inside the monitored folder";
}

// ---- one writer per store -------------------------------------------------------------------------------

TEST(CliContract, second_writer_on_a_followed_store_fails_with_exit_1_while_readers_still_work) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string job = make_job(tmp);
    const std::string db = tmp / "store.db";
    Background follower({program("msmon"), "ingest", job, "--follow", "--db", db, "--json"}, tmp.path(), env);
    ASSERT_GE(wait_until(
                  [&] {
                      std::string ignored;
                      return query_rows(db, {"--op", "norm"}, env, ignored).size() == 4;
                  },
                  milliseconds(5000))
                  .count(),
              0)
        << "follower never committed; stderr: " << follower.err();
    std::string error;

    auto second = run({program("msmon"), "ingest", job, "--db", db}, env);
    EXPECT_EQ(second.exit_code, 1);
    EXPECT_NE(second.err.find("another msmon"), std::string::npos) << "stderr: " << second.err;

    auto reader = run({program("msmon"), "query", "--db", db, "--op", "norm"}, env);
    EXPECT_EQ(reader.exit_code, 0) << reader.err;
    const auto rows = parse_query_csv(reader.out, error);
    EXPECT_TRUE(error.empty()) << error;
    EXPECT_EQ(rows.size(), 4u);

    follower.signal(SIGINT);
    ASSERT_EQ(follower.wait(milliseconds(5000)), 0) << follower.err();
    auto after = run({program("msmon"), "ingest", job, "--db", db}, env);
    EXPECT_EQ(after.exit_code, 0) << "the lock outlived the follower: " << after.err;
}

TEST(CliContract, query_dir_while_another_msmon_follows_it_reads_the_store_as_it_is) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string job = make_job(tmp);
    Background follower({program("msmon"), "ingest", job, "--follow", "--json"}, tmp.path(), env);
    // The follower holds the writer lock once its pid is in <store>.lock (query DIR must not take it first).
    const std::string lock_dir = tmp / "xdg-cache/msmon";
    ASSERT_GE(wait_until(
                  [&] {
                      for (const auto& f : find_files(lock_dir, ".db.lock"))
                          if (read_file(f) == std::to_string(follower.pid()) + "\n") return true;
                      return false;
                  },
                  milliseconds(5000))
                  .count(),
              0)
        << "follower never took the store lock; stderr: " << follower.err();
    std::string error;
    auto norms = [&] {
        auto r = run({program("msmon"), "query", job, "--op", "norm"}, env);
        return r.exit_code == 0 ? parse_query_csv(r.out, error).size() : 0u;
    };
    EXPECT_GE(wait_until([&] { return norms() == 4u; }, milliseconds(5000)).count(), 0)
        << "query DIR did not read the followed store; follower stderr: " << follower.err();
    EXPECT_TRUE(error.empty()) << error;
    follower.signal(SIGINT);
    ASSERT_EQ(follower.wait(milliseconds(5000)), 0) << follower.err();
}

}  // namespace
}  // namespace msmon::test
