// The rules of tests/support/series_rule_cases.hpp on a real clickhouse-server: its SQL for the step -> pixel column
// split, and its rank_steps and points for the op -> aggregate rule, give the tables' answers.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "store/clickhouse/clickhouse_reader.hpp"
#include "store/clickhouse/clickhouse_rules_sql.hpp"
#include "store/clickhouse/clickhouse_schema.hpp"
#include "tests/support/cluster_services.hpp"
#include "tests/support/series_rule_cases.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

class ClickHouseRules : public ::testing::Test {
protected:
    void SetUp() override {
        if (find_installed("clickhouse-server").empty())
            MSMON_SKIP_UNLESS_REQUIRED(
                "clickhouse-server is not installed (scripts/setup-cluster-deps.sh installs it)");
        ch_ = std::make_unique<ClickHouseTestServer>(tmp_ / "clickhouse");
        ASSERT_TRUE(ch_->ready()) << "clickhouse-server did not start: " << ch_->log();
    }
    TempDir tmp_;
    std::unique_ptr<ClickHouseTestServer> ch_;
};

TEST_F(ClickHouseRules, the_sql_column_split_gives_the_table) {
    int evaluated = 0;
    for (const auto& c : kColumnCases) {
        // clickhouse_series reduces in C++ (StepColumns) where (hi - lo + 1) * columns would overflow Int64.
        if (!clickhouse_can_split(c.lo, c.hi, c.columns)) continue;
        const std::string got = ch_->scalar("SELECT " + clickhouse_step_column_sql(c.lo, c.hi, c.columns) +
                                            " FROM (SELECT toInt64(" + std::to_string(c.step) + ") AS step)");
        EXPECT_EQ(got, std::to_string(c.column)) << case_name(c);
        ++evaluated;
    }
    EXPECT_EQ(evaluated, 15);  // all but the three spans past 64 bits
}

TEST_F(ClickHouseRules, rank_steps_and_points_aggregate_as_the_table) {
    const auto ddl = clickhouse_ddl("msmon_rules");
    ch_->scalar(ddl[0]);  // the database
    ch_->scalar(ddl[1]);  // points
    std::string insert =
        "INSERT INTO msmon_rules.points (job, node, spool, seq, rank, run, kind, vpp_stage, name, micro_step, step, "
        "op, op_ord, tensor_ord, is_text, value, text) VALUES ";
    int seq = 0;
    for (std::size_t i = 0; i < std::size(kOpCases); ++i) {
        const auto& c = kOpCases[i];
        for (std::size_t t = 0; t < c.values.size(); ++t) {
            const double v = c.values[t];
            const std::string value = std::isnan(v)   ? "nan"
                                      : std::isinf(v) ? (v > 0 ? "inf" : "-inf")
                                                      : std::to_string(v);
            insert += std::string(seq ? ", " : "") + "('job-rules', 'node0', 1, " + std::to_string(seq) +
                      ", 0, 'run', 'grad_reduced', '', 't" + std::to_string(t + 1) + "', -1, " +
                      std::to_string(step_of(i)) + ", '" + c.op + "', " + std::to_string(slot_of(c.op)) + ", " +
                      std::to_string(t) + ", 0, " + value + ", '')";
            ++seq;
        }
    }
    ch_->scalar(insert);
    // Opening works out rank_steps from points by the rule (clickhouse_acc_by_op_sql), as for an older store.
    auto reader = open_clickhouse_reader(ch_->target("msmon_rules"), "job-rules");
    for (std::size_t i = 0; i < std::size(kOpCases); ++i) {
        const auto& c = kOpCases[i];
        const auto every = reader->rank_series({"grad_reduced", c.op, std::nullopt, 0, {}});
        expect_value(value_at(every, step_of(i), describe(c)), c.expected, "rank_steps: " + describe(c));
        const auto filtered = reader->rank_series({"grad_reduced", c.op, std::string("^t"), 0, {}});
        expect_value(value_at(filtered, step_of(i), describe(c)), c.expected, "points: " + describe(c));
    }
}

}  // namespace
}  // namespace msmon::test
