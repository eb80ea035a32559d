// Which folders msmon reads and what rank, run and kind their values get: monitor_v2 rank_<r>/ folders with
// CRLF files, restarted runs of one rank, a rank folder given directly, a monitor_output/ that appears late.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

const std::string kV1Header = "vpp_stage,name,step,norm,min,max,mean,shape,dtype\n";

std::string v1_row(const std::string& name, int step, const std::string& norm) {
    return "0," + name + "," + std::to_string(step) + "," + norm + ",-0.5,0.5,0.001,\"[16, 8]\",torch.float32\n";
}

// ---- monitor_v2 -------------------------------------------------------------------------------------------

struct V2Row {
    int rank;
    std::string slug;  // file slug: weight_grad or module
    std::string vpp_stage;
    int step;
    std::string module_name;
    std::string scope;
    int micro_step;
    std::vector<std::string> ops;  // min,max,mean,norm,nans as written
    std::string kind;              // what msmon must report
};

const std::vector<std::string> kV2Ops = {"min", "max", "mean", "norm", "nans"};

// clang-format off
std::vector<V2Row> v2_rows() {
    const std::string fc1 = "0:decoder.layers.0.mlp.linear_fc1.weight";
    const std::string in = "0:decoder.layers.0.mlp.input.0", gout = "0:decoder.layers.0.mlp.grad_output.0";
    return {
        // weight_grad: scope reduced -> grad_reduced, unreduced -> grad_unreduced
        {0, "weight_grad", "0", 0, fc1, "unreduced", 1, {"-0.015625", "0.0234375", "1.1e-05", "0.123456789012345", "0.0"}, "grad_unreduced"},
        {0, "weight_grad", "0", 0, fc1, "reduced", 1, {"-0.03125", "0.046875", "2.2e-05", "0.24691357802469", "0.0"}, "grad_reduced"},
        {0, "weight_grad", "0", 1, fc1, "unreduced", 2, {"-2.015625", "4.875", "-1e-06", "1.7976931348623157e+308", "3.0"}, "grad_unreduced"},
        {0, "weight_grad", "0", 1, fc1, "reduced", 2, {"nan", "inf", "-inf", "nan", "17.0"}, "grad_reduced"},
        {0, "weight_grad", "-1", 1, "embedding.word_embeddings.weight", "reduced", 2, {"-0.5", "5e-324", "0.1", "0.3", "0.0"}, "grad_reduced"},
        {1, "weight_grad", "0", 0, fc1, "unreduced", 1, {"-0.25", "0.75", "0.0001", "9.5367431640625e-07", "0.0"}, "grad_unreduced"},
        {1, "weight_grad", "0", 0, fc1, "reduced", 1, {"-0.125", "0.375", "0.00005", "1e+16", "0.0"}, "grad_reduced"},
        // module: scope forward -> actv, backward -> actv_grad
        {0, "module", "0", 0, in, "forward", 1, {"-3.5", "3.25", "0.0078125", "1234.5678", "0.0"}, "actv"},
        {0, "module", "0", 0, gout, "backward", 1, {"-1e-05", "2e-05", "3e-07", "0.000123", "0.0"}, "actv_grad"},
        {0, "module", "0", 1, in, "forward", 2, {"-3.75", "3.5", "0.015625", "1300.25", "0.0"}, "actv"},
        {1, "module", "0", 0, in, "forward", 1, {"-4.5", "4.25", "0.5", "2000.125", "0.0"}, "actv"},
        {1, "module", "0", 0, gout, "backward", 1, {"-0.5", "0.5", "0.0", "0.0", "1.0"}, "actv_grad"},
    };
}
// clang-format on

std::string v2_key(const V2Row& r, const std::string& op) {
    return std::to_string(r.rank) + "|" + r.kind + "|" + r.vpp_stage + "|" + r.module_name + "|" +
           std::to_string(r.step) + "|" + std::to_string(r.micro_step) + "|" + op;
}

void write_v2_job(const std::string& job) {
    std::map<std::string, std::string> files;  // path -> LF text
    for (const auto& r : v2_rows()) {
        const std::string path = job + "/rank_" + std::to_string(r.rank) + "/" + r.slug + "_step0-1.csv";
        std::string& text = files[path];
        if (text.empty()) text = "vpp_stage,step,module_name,scope,micro_step,min,max,mean,norm,nans\n";
        text += r.vpp_stage + "," + std::to_string(r.step) + "," + r.module_name + "," + r.scope + "," +
                std::to_string(r.micro_step);
        for (const auto& v : r.ops) text += "," + v;
        text += "\n";
    }
    for (const auto& [path, text] : files) {
        fs::create_directories(fs::path(path).parent_path());
        write_file(path, to_crlf(text));  // csv.DictWriter's excel dialect: \r\n
    }
}

TEST(LayoutDiscovery, monitor_v2_crlf_rank_folders_give_exact_values_with_slug_and_scope_mapped_to_kinds) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string job = tmp / "job";
    write_v2_job(job);
    ASSERT_NE(read_file(job + "/rank_0/weight_grad_step0-1.csv").find("\r\n"), std::string::npos);
    const std::string db = tmp / "store.db";

    auto ingest = run({program("msmon"), "ingest", job, "--db", db, "--json"}, env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    EXPECT_EQ(json_count(ingest.out, "errors"), 0) << ingest.out;
    EXPECT_EQ(json_count(ingest.out, "ranks"), 2) << ingest.out;
    EXPECT_EQ(json_count(ingest.out, "rows"), static_cast<long long>(v2_rows().size())) << ingest.out;

    auto q = run({program("msmon"), "query", "--db", db}, env);
    ASSERT_EQ(q.exit_code, 0) << q.err;
    EXPECT_EQ(q.out.find('\r'), std::string::npos) << "a carriage return leaked into the query output:\n" << q.out;
    std::string error;
    const auto rows = parse_query_csv(q.out, error);
    ASSERT_TRUE(error.empty()) << error;

    std::map<std::string, std::string> expected;
    for (const auto& r : v2_rows())
        for (std::size_t k = 0; k < kV2Ops.size(); ++k) expected[v2_key(r, kV2Ops[k])] = r.ops[k];
    std::map<std::string, std::string> got;
    for (const auto& r : rows) EXPECT_TRUE(got.emplace(r.key(), r.value).second) << "duplicate " << r.key();
    for (const auto& [key, value] : expected) {
        auto it = got.find(key);
        if (it == got.end()) {
            ADD_FAILURE() << "missing " << key << " (expected " << value << ")";
            continue;
        }
        EXPECT_TRUE(same_number(value, it->second))
            << key << ": file has '" << value << "', query gave '" << it->second << "'";
    }
    for (const auto& [key, value] : got)
        EXPECT_TRUE(expected.count(key)) << "query printed a value that is in no file: " << key << " = " << value;

    // The mapped kinds are what --kind filters on.
    auto reduced = query_rows(db, {"--kind", "grad_reduced", "--op", "norm"}, env, error);
    ASSERT_TRUE(error.empty()) << error;
    std::set<std::string> names;
    for (const auto& r : reduced) names.insert(r.rank + ":" + r.name + "@" + r.step);
    EXPECT_EQ(names, (std::set<std::string>{
                         "0:0:decoder.layers.0.mlp.linear_fc1.weight@0", "0:0:decoder.layers.0.mlp.linear_fc1.weight@1",
                         "0:embedding.word_embeddings.weight@1", "1:0:decoder.layers.0.mlp.linear_fc1.weight@0"}));

    auto json = run({program("msmon"), "query", "--db", db, "--format", "json"}, env);
    ASSERT_EQ(json.exit_code, 0) << json.err;
    EXPECT_EQ(json.out.find('\r'), std::string::npos) << "a carriage return leaked into the JSON output";
}

// ---- restarts: several run folders of one rank ------------------------------------------------------------

TEST(LayoutDiscovery, restarted_rank_keeps_both_run_folders_as_separate_runs) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string root = tmp / "job/monitor_output";
    const std::string first = root + "/Nov22_10-00-00-rank0-aaaaaaaa";
    const std::string second = root + "/Nov22_11-00-00-rank0-bbbbbbbb";
    fs::create_directories(first);
    fs::create_directories(second);
    write_file(first + "/grad_reduced_0-0.csv", kV1Header + v1_row("w", 0, "1.5"));
    write_file(first + "/grad_reduced_1-1.csv", kV1Header + v1_row("w", 1, "2.5"));
    write_file(first + "/grad_reduced_2-2.csv", kV1Header + v1_row("w", 2, "3.5"));
    // The restart begins again at step 0 (overlapping steps 0 and 1).
    write_file(second + "/grad_reduced_0-0.csv", kV1Header + v1_row("w", 0, "7.25"));
    write_file(second + "/grad_reduced_1-1.csv", kV1Header + v1_row("w", 1, "8.25"));
    const std::string db = tmp / "store.db";

    auto ingest = run({program("msmon"), "ingest", tmp / "job", "--db", db, "--json"}, env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    EXPECT_EQ(json_count(ingest.out, "runs"), 2) << ingest.out;
    EXPECT_EQ(json_count(ingest.out, "ranks"), 1) << ingest.out;
    EXPECT_EQ(json_count(ingest.out, "rows"), 5) << ingest.out;
    EXPECT_EQ(json_count(ingest.out, "errors"), 0) << ingest.out;

    std::string error;
    auto step0 = [&](bool all_runs) {
        std::vector<std::string> args = {"--kind", "grad_reduced", "--op", "norm", "--steps", "0"};
        if (all_runs) args.push_back("--all-runs");
        std::vector<std::string> values;
        for (const auto& r : query_rows(db, args, env, error)) {
            EXPECT_EQ(r.rank, "0");
            EXPECT_EQ(r.name, "w");
            values.push_back(r.value);
        }
        return values;
    };
    // The value that counts is the later run's; --all-runs gives both, the earlier run first.
    EXPECT_EQ(step0(false), (std::vector<std::string>{"7.25"}));
    EXPECT_EQ(step0(true), (std::vector<std::string>{"1.5", "7.25"}));
    ASSERT_TRUE(error.empty()) << error;

    auto all = query_rows(db, {"--op", "norm", "--all-runs"}, env, error);
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_EQ(all.size(), 5u) << "every row of both runs must be kept";
    // Without --all-runs: the restart's steps 0-1; the first run's step 2 was abandoned with the rest of it.
    EXPECT_EQ(query_rows(db, {"--op", "norm"}, env, error).size(), 2u);
}

// ---- what a DIR argument can be ---------------------------------------------------------------------------

TEST(LayoutDiscovery, rank_folder_given_directly_is_read_with_the_rank_from_its_name) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string v1 = tmp / "Nov22_13-55-47-rank5-0123abcd";
    fs::create_directories(v1);
    write_file(v1 + "/grad_reduced_0-0.csv", kV1Header + v1_row("w", 0, "0.625"));
    const std::string v2 = tmp / "rank_3";
    fs::create_directories(v2);
    write_file(v2 + "/weight_grad_step0-0.csv",
               to_crlf("vpp_stage,step,module_name,scope,micro_step,min,max,mean,norm,nans\n"
                       "0,0,0:w,reduced,1,-0.5,0.5,0.0,0.875,0.0\n"));

    for (const auto& [dir, rank, norm] : {std::tuple<std::string, std::string, std::string>{v1, "5", "0.625"},
                                          std::tuple<std::string, std::string, std::string>{v2, "3", "0.875"}}) {
        const std::string db = dir + ".db";
        auto ingest = run({program("msmon"), "ingest", dir, "--db", db, "--json"}, env);
        ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
        EXPECT_EQ(json_count(ingest.out, "ranks"), 1) << ingest.out;
        std::string error;
        auto rows = query_rows(db, {"--op", "norm"}, env, error);
        ASSERT_TRUE(error.empty()) << error;
        ASSERT_EQ(rows.size(), 1u) << dir;
        EXPECT_EQ(rows[0].rank, rank) << dir;
        EXPECT_EQ(rows[0].kind, "grad_reduced") << dir;
        EXPECT_EQ(rows[0].value, norm) << dir;
    }
}

// `msmon ingest <rank folder> --follow` started before the trainer wrote its first file.
class EmptyRankFolder : public ::testing::TestWithParam<std::string> {};

TEST_P(EmptyRankFolder, given_directly_before_its_first_file_it_is_followed_as_that_rank) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const bool v2 = GetParam() == "monitor_v2";
    const std::string dir = v2 ? tmp / "rank_3" : tmp / "Nov22_13-55-47-rank3-0123abcd";
    fs::create_directories(dir);
    const std::string db = tmp / "store.db";
    Background ingest({program("msmon"), "ingest", dir, "--follow", "--db", db, "--json"}, tmp.path(), env);
    ASSERT_GE(wait_until([&] { return fs::exists(db); }, milliseconds(3000)).count(), 0) << ingest.err();
    // paces the input: the first file comes 150 ms after msmon opened its store, once it follows the folder (msmon
    // ingest says nothing when it starts to follow)
    std::this_thread::sleep_for(milliseconds(150));
    if (v2)
        write_file(dir + "/weight_grad_step0-0.csv",
                   to_crlf("vpp_stage,step,module_name,scope,micro_step,min,max,mean,norm,nans\n"
                           "0,0,0:w,reduced,1,-0.5,0.5,0.0,0.875,0.0\n"));
    else write_file(dir + "/grad_reduced_0-0.csv", kV1Header + v1_row("0:w", 0, "0.875"));
    auto seen = [&] {
        std::string error;
        auto rows = query_rows(db, {"--op", "norm"}, env, error);
        return rows.size() == 1 && rows[0].rank == "3" && rows[0].kind == "grad_reduced" && rows[0].value == "0.875";
    };
    EXPECT_GE(wait_until(seen, milliseconds(2000)).count(), 0)
        << "the first file written into the followed rank folder was never read; stderr: " << ingest.err();
    ingest.signal(SIGINT);
    ASSERT_EQ(ingest.wait(milliseconds(5000)), 0) << ingest.err();
    EXPECT_EQ(json_count(ingest.out(), "rows"), 1) << ingest.out();
}

INSTANTIATE_TEST_SUITE_P(Layout, EmptyRankFolder, ::testing::Values("msprobe_v1", "monitor_v2"),
                         [](const auto& info) { return info.param; });

class LateMonitorOutput : public ::testing::TestWithParam<std::string> {};

TEST_P(LateMonitorOutput, monitor_output_created_after_follow_started_is_picked_up_live) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string job = tmp / "job";
    fs::create_directories(job);  // the trainer has not created monitor_output/ yet
    const std::string db = tmp / "store.db";
    std::vector<std::string> argv = {program("msmon"), "ingest", job, "--follow", "--db", db, "--json"};
    if (GetParam() == "polling") argv.insert(argv.end(), {"--poll-ms", "100"});
    Background ingest(argv, tmp.path(), env);
    ASSERT_GE(wait_until([&] { return fs::exists(db); }, milliseconds(3000)).count(), 0) << ingest.err();
    // paces the input: monitor_output/ appears 150 ms after msmon opened its store, once it follows the job (msmon
    // ingest says nothing when it starts to follow)
    std::this_thread::sleep_for(milliseconds(150));

    const std::string rank_dir = job + "/monitor_output/Nov22_13-55-47-rank2-426b92d1";
    fs::create_directories(rank_dir);
    write_file(rank_dir + "/grad_reduced_0-4.csv", kV1Header + v1_row("w", 0, "4.5"));
    auto norm_at = [&](int step) {
        std::string error;
        auto rows = query_rows(db, {"--op", "norm", "--steps", std::to_string(step)}, env, error);
        return rows.size() == 1 && rows[0].rank == "2" ? rows[0].value : std::string();
    };
    EXPECT_GE(wait_until([&] { return norm_at(0) == "4.5"; }, milliseconds(2000)).count(), 0)
        << "rows under a late monitor_output/ never arrived; stderr: " << ingest.err();
    // And it is followed from then on.
    append_file(rank_dir + "/grad_reduced_0-4.csv", v1_row("w", 1, "5.5"));
    EXPECT_GE(wait_until([&] { return norm_at(1) == "5.5"; }, milliseconds(2000)).count(), 0)
        << "appended row under a late monitor_output/ not seen";

    ingest.signal(SIGINT);
    ASSERT_EQ(ingest.wait(milliseconds(5000)), 0) << ingest.err();
    EXPECT_EQ(json_count(ingest.out(), "errors"), 0) << ingest.out();
    EXPECT_EQ(json_count(ingest.out(), "rows"), 2) << ingest.out();
}

INSTANTIATE_TEST_SUITE_P(Watch, LateMonitorOutput, ::testing::Values("inotify", "polling"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace msmon::test
