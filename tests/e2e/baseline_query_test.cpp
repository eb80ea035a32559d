// `msmon query --baseline`: the same job run again with a x2 drift planted from step 50 prints both runs' values
// side by side, their ratio exactly 1 before step 50 and growing to 2 on the drifted module after it; runs of
// different lengths and parameter sets match by name, and what one run alone has is printed with the other
// empty and counted on stderr, never dropped.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

struct Row {
    std::string name, step, value, baseline, ratio;
};

std::vector<Row> rows_of(const std::string& csv) {
    std::vector<Row> out;
    std::size_t at = csv.find('\n') + 1;
    while (at < csv.size()) {
        const auto end = csv.find('\n', at);
        std::vector<std::string> cells;
        std::string cell;
        for (char c : csv.substr(at, end - at)) {
            if (c == ',') cells.push_back(cell), cell.clear();
            else cell += c;
        }
        cells.push_back(cell);
        if (cells.size() == 10) out.push_back({cells[3], cells[4], cells[7], cells[8], cells[9]});
        at = end + 1;
    }
    return out;
}

class BaselineQuery : public ::testing::Test {
protected:
    void SetUp() override {
        auto r = run({program("msmon"), "simulate", tmp / "base", "--ranks", "2", "--steps", "100"}, isolated_env(tmp));
        ASSERT_EQ(r.exit_code, 0) << r.err;
        r = run(
            {program("msmon"), "simulate", tmp / "drift", "--ranks", "2", "--steps", "120", "--faults", "drift@50x2"},
            isolated_env(tmp));
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    TempDir tmp;
};

TEST_F(BaselineQuery, a_planted_drift_shows_as_the_ratio_to_the_baseline_and_the_longer_run_is_not_dropped) {
    // Job folders both: each is brought into its own store first.
    const auto r = run({program("msmon"), "query", tmp / "drift", "--baseline", tmp / "base", "--rank", "0", "--kind",
                        "grad_reduced", "--op", "norm", "--name", "layers\\.1\\.mlp\\.linear_fc2"},
                       isolated_env(tmp));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(r.out.substr(0, r.out.find('\n')), "rank,kind,vpp_stage,name,step,micro_step,op,value,baseline,ratio");
    const auto rows = rows_of(r.out);
    ASSERT_EQ(rows.size(), 120u) << r.out;
    for (const Row& row : rows) {
        const int step = std::stoi(row.step);
        if (step < 50) {
            EXPECT_EQ(row.ratio, "1") << "step " << step << ": the same job before the drift";
            EXPECT_EQ(row.value, row.baseline);
        } else if (step < 100) {
            EXPECT_GT(std::stod(row.ratio), 1.0) << step;
        } else {
            EXPECT_EQ(row.baseline, "") << "step " << step << ": the baseline stopped at 99";
            EXPECT_EQ(row.ratio, "");
            EXPECT_NE(row.value, "");
        }
    }
    EXPECT_NEAR(std::stod(rows[99].ratio), 1.99, 0.35) << "x2 by the end";
    EXPECT_NE(r.err.find("100 values matched the baseline; 20 only in this run, 0 only in the baseline"),
              std::string::npos)
        << r.err;
}

TEST_F(BaselineQuery, series_one_run_alone_has_are_listed_and_printed_with_the_other_side_empty) {
    auto r = run({program("msmon"), "simulate", tmp / "small", "--ranks", "2", "--steps", "100", "--params", "8"},
                 isolated_env(tmp));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run({program("msmon"), "query", tmp / "small", "--baseline", tmp / "base", "--rank", "0", "--kind",
             "grad_reduced", "--op", "norm", "--steps", "10", "--format", "json"},
            isolated_env(tmp));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    std::size_t only_baseline = 0, matched = 0;
    for (const auto& row : j) {
        if (row["value"].is_null()) {
            ++only_baseline;
            EXPECT_TRUE(row["ratio"].is_null());
            EXPECT_FALSE(row["baseline"].is_null());
        } else {
            ++matched;
        }
    }
    EXPECT_GT(only_baseline, 0u) << "the baseline's 16 parameters against 8";
    EXPECT_GT(matched, 0u);
    EXPECT_NE(r.err.find(std::to_string(only_baseline) + " series only in the baseline: rank 0 grad_reduced "),
              std::string::npos)
        << r.err;
}

TEST_F(BaselineQuery, a_baseline_that_is_not_there_is_named) {
    const auto r = run({program("msmon"), "query", tmp / "drift", "--baseline", tmp / "nowhere"}, isolated_env(tmp));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("--baseline: no job folder or store at"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace msmon::test
