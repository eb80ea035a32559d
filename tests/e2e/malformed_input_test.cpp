// Rows that do not fit their header are counted, logged with file and line, kept in parse_issue, and never
// guessed at; the rows around them are stored exactly. A half-written last line is not an error.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

namespace fs = std::filesystem;

TEST(MalformedInput, ragged_cc_rows_and_bad_numbers_are_counted_logged_with_file_and_line_and_skipped) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string run_dir = tmp / "job/monitor_output/Nov22_13-55-47-rank0-426b92d1";
    fs::create_directories(run_dir);
    const std::string path = run_dir + "/other_0-0.csv";
    // Line numbers are 1-based physical lines; the header is line 1. Lines 2 and 8 are good; 3 is msprobe's cc
    // row of one tensor (the step after the first value, no vpp stage: read as all_reduce); 4 and 9 are cc rows of
    // several tensors run together (told once for all_reduce, both counted); 5 a non-numeric op, 6 a non-integer
    // step, 7 a stray quote.
    const std::string text =
        "vpp_stage,name,step,norm,min,max,shape,dtype\n"
        "0,decoder.layers.0.mlp.linear_fc1.weight,0,0.912345678901,-0.125,0.25,\"[4096, 1024]\",torch.float32\n"
        "all_reduce,0.5,3,0.1,0.2,[4],torch.float32\n"
        "all_reduce,0.5,3,0.1,0.2,[4],torch.float32,0.6,0.7,0.8,[4],torch.float32\n"
        "0,decoder.layers.0.mlp.linear_fc2.weight,0,abc,-0.125,0.25,[1024],torch.float32\n"
        "0,decoder.layers.0.mlp.linear_fc2.weight,1.5,0.3,-0.125,0.25,[1024],torch.float32\n"
        "0,decoder.layers.0.self_attention.weight,0,\"0.3,-0.125,0.25,[1024],torch.float32\n"
        "0,decoder.final_layernorm.weight,0,nan,-inf,inf,[1024],torch.float32\n"
        "all_reduce,0.5,4,0.1,0.2,[4],torch.float32,0.6,0.7,0.8,[4],torch.float32\n";
    const std::set<int> bad_lines = {4, 5, 6, 7};  // stored and logged; 9 is counted only
    write_file(path, text);
    const std::string db = tmp / "store.db";

    auto ingest = run({program("msmon"), "ingest", tmp / "job", "--db", db, "--json"}, env);
    ASSERT_EQ(ingest.exit_code, 0) << "stderr: " << ingest.err;
    EXPECT_EQ(json_count(ingest.out, "errors"), static_cast<long long>(bad_lines.size()) + 1) << ingest.out;
    EXPECT_EQ(json_count(ingest.out, "rows"), 3) << ingest.out;

    std::string error;
    auto rows = query_rows(db, {}, env, error);
    ASSERT_TRUE(error.empty()) << error;
    std::map<std::string, std::string> got;
    for (const auto& r : rows) got[r.name + "|" + r.step + "|" + r.op] = r.value;
    const std::map<std::string, std::string> expected = {
        {"decoder.layers.0.mlp.linear_fc1.weight|0|norm", "0.912345678901"},
        {"decoder.layers.0.mlp.linear_fc1.weight|0|min", "-0.125"},
        {"decoder.layers.0.mlp.linear_fc1.weight|0|max", "0.25"},
        {"decoder.layers.0.mlp.linear_fc1.weight|0|shape", "[4096, 1024]"},
        {"decoder.layers.0.mlp.linear_fc1.weight|0|dtype", "torch.float32"},
        {"decoder.final_layernorm.weight|0|norm", "nan"},
        {"decoder.final_layernorm.weight|0|min", "-inf"},
        {"decoder.final_layernorm.weight|0|max", "inf"},
        {"decoder.final_layernorm.weight|0|shape", "[1024]"},
        {"decoder.final_layernorm.weight|0|dtype", "torch.float32"},
        {"all_reduce|3|norm", "0.5"},
        {"all_reduce|3|min", "0.1"},
        {"all_reduce|3|max", "0.2"},
        {"all_reduce|3|shape", "[4]"},
        {"all_reduce|3|dtype", "torch.float32"},
    };
    EXPECT_EQ(got, expected) << "only the two valid rows and the one-tensor cc row may be stored, exactly";
    for (const auto& r : rows) EXPECT_EQ(r.kind, "other");

    // The log names the file and the line of every bad row, and of no good one.
    const std::string canonical = fs::canonical(path).string();
    const std::string log = read_file(log_path(tmp));
    ASSERT_FALSE(log.empty()) << "no log at " << log_path(tmp);
    EXPECT_NE(log.find("communication (cc_distribution) rows of all_reduce"), std::string::npos) << log;
    for (int line = 2; line <= 8; ++line) {
        const std::string mark = canonical + ":" + std::to_string(line) + ":";
        if (bad_lines.count(line))
            EXPECT_NE(log.find(mark), std::string::npos) << "log does not name " << mark << "\n" << log;
        else EXPECT_EQ(log.find(mark), std::string::npos) << "log names a good line " << mark;
    }

    // The store keeps them too.
    auto issues = sqlite_rows(
        db, "SELECT f.path, i.line FROM parse_issue i JOIN file f ON f.id = i.file_id ORDER BY i.line", error);
    ASSERT_TRUE(error.empty()) << error;
    std::set<int> issue_lines;
    for (const auto& i : issues) {
        EXPECT_EQ(i[0], canonical);
        issue_lines.insert(std::stoi(i[1]));
    }
    EXPECT_EQ(issue_lines, bad_lines);
    EXPECT_EQ(issues.size(), bad_lines.size());

    // Reading again adds neither rows nor issues.
    auto again = run({program("msmon"), "ingest", tmp / "job", "--db", db, "--json"}, env);
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(json_count(again.out, "errors"), 0) << again.out;
    EXPECT_EQ(json_count(again.out, "rows"), 0) << again.out;

    // Line numbers continue across sessions: rows appended later are numbered from the file's start.
    append_file(path,
                "0,decoder.layers.1.mlp.linear_fc1.weight,1,0.5,-0.125,0.25,[1024],torch.float32\n"  // 10 ok
                "reduce_scatter,0.5,1,0.1,0.2,[4],torch.float32,0.5,0.1,0.2,[4],torch.float32\n");   // 11 bad
    auto later = run({program("msmon"), "ingest", tmp / "job", "--db", db, "--json"}, env);
    ASSERT_EQ(later.exit_code, 0) << later.err;
    EXPECT_EQ(json_count(later.out, "errors"), 1) << later.out;
    EXPECT_EQ(json_count(later.out, "rows"), 1) << later.out;
    const std::string log2 = read_file(log_path(tmp));
    EXPECT_NE(log2.find(canonical + ":11:"), std::string::npos) << "log does not name line 11:\n" << log2;
    EXPECT_EQ(log2.find(canonical + ":10:"), std::string::npos) << "log names the good line 10";
}

TEST(MalformedInput, half_written_last_line_is_not_an_error_and_is_read_once_its_newline_arrives) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string run_dir = tmp / "job/monitor_output/Nov22_13-55-47-rank0-426b92d1";
    fs::create_directories(run_dir);
    const std::string path = run_dir + "/grad_reduced_0-4.csv";
    const std::string header = "vpp_stage,name,step,norm,min,max,shape,dtype\n";
    const std::string line1 = "0,w,0,1.25,-0.5,0.5,\"[16, 8]\",torch.float32\n";
    const std::string line2 = "0,w,1,2.75,-0.5,0.5,\"[16, 8]\",torch.float32\n";
    // pandas can leave a line cut anywhere, even inside a quoted field.
    write_file(path, header + line1 + line2.substr(0, 24));
    const std::string db = tmp / "store.db";

    auto first = run({program("msmon"), "ingest", tmp / "job", "--db", db, "--json"}, env);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    EXPECT_EQ(json_count(first.out, "errors"), 0) << first.out;
    EXPECT_EQ(json_count(first.out, "rows"), 1) << first.out;

    append_file(path, line2.substr(24));
    auto second = run({program("msmon"), "ingest", tmp / "job", "--db", db, "--json"}, env);
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_EQ(json_count(second.out, "errors"), 0) << second.out;
    EXPECT_EQ(json_count(second.out, "rows"), 1) << second.out;

    std::string error;
    auto rows = query_rows(db, {"--op", "norm"}, env, error);
    ASSERT_TRUE(error.empty()) << error;
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].step + "=" + rows[0].value, "0=1.25");
    EXPECT_EQ(rows[1].step + "=" + rows[1].value, "1=2.75");
}

TEST(MalformedInput, unusable_header_counts_every_row_under_it_and_other_files_are_still_read) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string run_dir = tmp / "job/monitor_output/Nov22_13-55-47-rank0-426b92d1";
    fs::create_directories(run_dir);
    // No step column: nothing in this file can be placed.
    write_file(run_dir + "/exp_avg_0-0.csv", "vpp_stage,name,norm\n0,w,1.0\n0,v,2.0\n");
    write_file(run_dir + "/grad_reduced_0-0.csv",
               "vpp_stage,name,step,norm,shape,dtype\n0,w,0,3.5,[4],torch.float32\n");
    const std::string db = tmp / "store.db";
    auto ingest = run({program("msmon"), "ingest", tmp / "job", "--db", db, "--json"}, env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    // Both rows under it are counted (the header itself may be reported too).
    EXPECT_GE(json_count(ingest.out, "errors"), 2) << ingest.out;
    std::string error;
    auto issues = sqlite_rows(db, "SELECT DISTINCT line FROM parse_issue ORDER BY line", error);
    ASSERT_TRUE(error.empty()) << error;
    std::set<std::string> lines;
    for (const auto& i : issues) lines.insert(i[0]);
    EXPECT_TRUE(lines.count("2") && lines.count("3")) << "rows on lines 2 and 3 not recorded as issues";
    auto rows = query_rows(db, {"--op", "norm"}, env, error);
    ASSERT_TRUE(error.empty()) << error;
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].kind + "=" + rows[0].value, "grad_reduced=3.5");
}

}  // namespace
}  // namespace msmon::test
