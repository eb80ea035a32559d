// Every data cell of every real msprobe CSV comes back from `msmon ingest` + `msmon query`, exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>

#include "tests/support/reference_csv.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

using Key = std::string;  // rank|kind|vpp|name|step|micro|op

Key make_key(const std::string& rank, const std::string& kind, const std::string& vpp, const std::string& name,
             const std::string& step, const std::string& micro, const std::string& op) {
    return rank + "|" + kind + "|" + vpp + "|" + name + "|" + step + "|" + micro + "|" + op;
}

bool same_cell(const std::string& expected, const std::string& got, const std::string& op) {
    if (op == "shape" || op == "dtype") return expected == got;
    double a = 0, b = 0;
    if (!reference_double(expected, a) || !reference_double(got, b)) return false;
    if (std::isnan(a)) return std::isnan(b);
    return a == b;
}

class FixtureRoundtrip : public ::testing::TestWithParam<std::string> {};

TEST_P(FixtureRoundtrip, query_reproduces_every_csv_cell) {
    const std::string shared = shared_dir();
    if (shared.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: real msprobe fixtures not available");
    const std::string fixture = shared + "/fixtures/msprobe-real/" + GetParam();
    TempDir tmp;
    const std::string db = tmp / "store.db";
    const std::map<std::string, std::string> env = {{"XDG_STATE_HOME", tmp / "state"}};

    auto ingest = run({program("msmon"), "ingest", fixture, "--db", db, "--json"}, env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    auto query = run({program("msmon"), "query", "--db", db, "--format", "csv"}, env);
    ASSERT_EQ(query.exit_code, 0) << query.err;

    auto out = parse_csv_reference(query.out);
    ASSERT_FALSE(out.empty());
    ASSERT_EQ(out[0],
              (std::vector<std::string>{"rank", "kind", "vpp_stage", "name", "step", "micro_step", "op", "value"}));
    std::map<Key, std::string> got;
    for (std::size_t i = 1; i < out.size(); ++i) {
        const auto& r = out[i];
        ASSERT_EQ(r.size(), 8u) << "query line " << i;
        ASSERT_TRUE(got.emplace(make_key(r[0], r[1], r[2], r[3], r[4], r[5], r[6]), r[7]).second)
            << "duplicate value in query output: line " << i;
    }

    const std::regex file_re(R"(^(.*)_(\d+)-(\d+)\.csv$)");
    const std::regex dir_re(R"(-rank(\d+)-[0-9a-f]{8}$)");
    std::size_t expected_cells = 0, mismatches = 0;
    const auto csv_files = find_files(fixture + "/monitor_output", ".csv");
    for (const auto& path : csv_files) {
        const std::string file = path.substr(path.rfind('/') + 1);
        const std::string dir = path.substr(0, path.rfind('/'));
        std::smatch fm, dm;
        if (file == "stack_info.csv") continue;
        ASSERT_TRUE(std::regex_match(file, fm, file_re)) << path;
        ASSERT_TRUE(std::regex_search(dir, dm, dir_re)) << dir;
        const std::string kind = fm[1], rank = dm[1];
        auto rows = parse_csv_reference(read_file(path));
        ASSERT_FALSE(rows.empty()) << path;
        const auto& header = rows[0];
        for (std::size_t i = 1; i < rows.size(); ++i) {
            std::map<std::string, std::string> cell;
            ASSERT_EQ(rows[i].size(), header.size()) << path << " line " << i + 1;
            for (std::size_t c = 0; c < header.size(); ++c) cell[header[c]] = rows[i][c];
            for (std::size_t c = 0; c < header.size(); ++c) {
                const std::string& op = header[c];
                if (op == "vpp_stage" || op == "name" || op == "step" || op == "micro_step") continue;
                ++expected_cells;
                const Key key = make_key(rank, kind, cell["vpp_stage"], cell["name"], cell["step"],
                                         cell.count("micro_step") ? cell["micro_step"] : "", op);
                auto it = got.find(key);
                if (it == got.end()) {
                    if (++mismatches < 10) ADD_FAILURE() << "missing " << key << " (" << path << ":" << i + 1 << ")";
                } else if (!same_cell(rows[i][c], it->second, op)) {
                    if (++mismatches < 10)
                        ADD_FAILURE() << key << ": file has '" << rows[i][c] << "', query gave '" << it->second << "'";
                }
            }
        }
    }
    EXPECT_EQ(mismatches, 0u);
    // `struct` has no statistics CSV (msprobe stops after writing module_struct.json): nothing to print.
    if (!csv_files.empty()) {
        EXPECT_GT(expected_cells, 0u);
    }
    EXPECT_EQ(got.size(), expected_cells) << "query printed values that are in no CSV";
}

INSTANTIATE_TEST_SUITE_P(RealMsprobe, FixtureRoundtrip,
                         ::testing::Values("wg", "xy", "alert", "stack", "struct", "wg_mbs"));

TEST(FixtureRoundtrip, json_output_has_contract_keys_and_nan_as_text) {
    const std::string shared = shared_dir();
    if (shared.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: real msprobe fixtures not available");
    TempDir tmp;
    const std::string db = tmp / "store.db";
    ASSERT_EQ(run({program("msmon"), "ingest", shared + "/fixtures/msprobe-real/xy", "--db", db}).exit_code, 0);
    auto q = run({program("msmon"), "query", "--db", db, "--kind", "actv_grad", "--name", "^\\.input$", "--op", "norm",
                  "--steps", "0", "--format", "json"});
    ASSERT_EQ(q.exit_code, 0) << q.err;
    // Root module's input grad is None: every op is nan (xy NOTES); micro steps 0 and 1.
    EXPECT_NE(q.out.find("\"rank\":0,\"kind\":\"actv_grad\",\"vpp_stage\":0,\"name\":\".input\",\"step\":0,"
                         "\"micro_step\":0,\"op\":\"norm\",\"value\":\"nan\""),
              std::string::npos)
        << q.out;
    EXPECT_NE(q.out.find("\"micro_step\":1"), std::string::npos) << q.out;
}

}  // namespace
}  // namespace msmon::test
