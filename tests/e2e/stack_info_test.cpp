// stack_info.csv: one record per module whose quoted stack field spans many physical lines; the
// store's stack_info table gets one row per module with the whole stack text.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "tests/support/e2e_support.hpp"
#include "tests/support/reference_csv.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

namespace fs = std::filesystem;

// msprobe's analyze_api_call_stack: per frame "File {path}, line {n}, in {func}, \n {code} \n".
std::string frame(const std::string& path, int line, const std::string& func, const std::string& code) {
    return "File " + path + ", line " + std::to_string(line) + ", in " + func + ", \n " + code + " \n";
}

std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

std::map<std::string, std::string> stored_stacks(const std::string& db, std::string& error) {
    std::map<std::string, std::string> out;
    for (const auto& r : sqlite_rows(db, "SELECT module, stack FROM stack_info", error)) {
        if (r.size() == 2 && !out.emplace(r[0], r[1]).second) error = "module stored twice: " + r[0];
    }
    return out;
}

TEST(StackInfo, multiline_quoted_records_are_stored_one_row_per_module_with_the_full_stack) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string run_dir = tmp / "job/monitor_output/Nov22_13-56-54-rank0-b15cc9a5";
    fs::create_directories(run_dir);
    const std::map<std::string, std::string> stacks = {
        {"0:", frame("train.py", 115, "<module>", "main()")},
        {"0:embed", frame("torch/nn/modules/module.py", 1212, "_call_impl", "result = forward_call(*input, **kwargs)") +
                        frame("model.py", 47, "forward", "x = self.embed(x)") +
                        frame("train.py", 73, "main", "loss = F.mse_loss(model(x), y) / args.grad_acc") +
                        frame("train.py", 115, "<module>", "main()")},
        {"0:layers.0.mlp", frame("model.py", 35, "forward", "return x + self.fc2(self.act(self.fc1(self.norm(x))))") +
                               frame("model.py", 12, "forward", "print(\"quoted, with a comma\")")},
    };
    std::string text = "module_name,stack_info\n";
    for (const auto& [module, stack] : stacks) text += module + "," + quoted(stack) + "\n";
    write_file(run_dir + "/stack_info.csv", text);
    write_file(run_dir + "/grad_reduced_0-0.csv",
               "vpp_stage,name,step,norm,shape,dtype\n0,embed.weight,0,0.75,\"[16, 8]\",torch.float32\n");
    const std::string db = tmp / "store.db";

    auto ingest = run({program("msmon"), "ingest", tmp / "job", "--db", db, "--json"}, env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    EXPECT_EQ(json_count(ingest.out, "errors"), 0) << ingest.out;

    std::string error;
    const auto got = stored_stacks(db, error);
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_EQ(got.size(), stacks.size());
    for (const auto& [module, stack] : stacks) {
        auto it = got.find(module);
        if (it == got.end()) {
            ADD_FAILURE() << "no stack_info row for module '" << module << "'";
            continue;
        }
        EXPECT_EQ(it->second, stack) << "stack of '" << module << "' not stored whole";
    }
    // The statistics file beside it is read as usual.
    auto rows = query_rows(db, {"--op", "norm"}, env, error);
    ASSERT_TRUE(error.empty()) << error;
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].value, "0.75");
}

TEST(StackInfo, record_cut_inside_its_quoted_stack_waits_for_the_rest_and_is_then_stored_whole) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string run_dir = tmp / "job/monitor_output/Nov22_13-56-54-rank0-b15cc9a5";
    fs::create_directories(run_dir);
    const std::string a =
        frame("model.py", 47, "forward", "x = self.embed(x)") + frame("train.py", 115, "<module>", "main()");
    const std::string b =
        frame("model.py", 35, "forward", "return self.fc2(x)") + frame("train.py", 115, "<module>", "main()");
    const std::string text = "module_name,stack_info\n0:embed," + quoted(a) + "\n0:fc2," + quoted(b) + "\n";
    // pandas' buffered writer can stop anywhere: here right after a newline inside the second quoted field.
    const std::size_t cut = text.find("\n", text.find("0:fc2")) + 1;
    write_file(run_dir + "/stack_info.csv", text.substr(0, cut));
    const std::string db = tmp / "store.db";
    auto first = run({program("msmon"), "ingest", tmp / "job", "--db", db, "--json"}, env);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    EXPECT_EQ(json_count(first.out, "errors"), 0) << first.out;
    std::string error;
    auto got = stored_stacks(db, error);
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_EQ(got, (std::map<std::string, std::string>{{"0:embed", a}})) << "a partial record was stored";

    append_file(run_dir + "/stack_info.csv", text.substr(cut));
    auto second = run({program("msmon"), "ingest", tmp / "job", "--db", db, "--json"}, env);
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_EQ(json_count(second.out, "errors"), 0) << second.out;
    got = stored_stacks(db, error);
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_EQ(got, (std::map<std::string, std::string>{{"0:embed", a}, {"0:fc2", b}}));
}

TEST(StackInfo, real_msprobe_stack_fixture_gives_fourteen_module_stacks) {
    const std::string shared = shared_dir();
    if (shared.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: real msprobe fixtures not available");
    const std::string fixture = shared + "/fixtures/msprobe-real/stack";
    const auto files = find_files(fixture + "/monitor_output", "/stack_info.csv");
    ASSERT_EQ(files.size(), 1u);
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string db = tmp / "store.db";
    auto ingest = run({program("msmon"), "ingest", fixture, "--db", db, "--json"}, env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    EXPECT_EQ(json_count(ingest.out, "errors"), 0) << ingest.out;

    std::string error;
    const auto got = stored_stacks(db, error);
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_EQ(got.size(), 14u);
    // Each stored stack is the file's field, byte for byte (the independent reference reader decides).
    const auto records = parse_csv_reference(read_file(files[0]));
    ASSERT_EQ(records.size(), 15u);
    for (std::size_t i = 1; i < records.size(); ++i) {
        ASSERT_EQ(records[i].size(), 2u);
        auto it = got.find(records[i][0]);
        if (it == got.end()) {
            ADD_FAILURE() << "no stack_info row for module '" << records[i][0] << "'";
            continue;
        }
        EXPECT_EQ(it->second, records[i][1]) << "module " << records[i][0];
    }
}

}  // namespace
}  // namespace msmon::test
