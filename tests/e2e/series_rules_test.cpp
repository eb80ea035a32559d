// One table for each of core/series' two rules, run through every place that applies it, so none can drift:
//   the step -> pixel column split (step_columns.hpp): StepColumns itself, downsample_minmax, the braille chart's
//     own marks, and ClickHouse's SQL for it (on a real clickhouse-server, when installed);
//   the op -> aggregate rule (op_aggregate.hpp): the arithmetic itself, SQLite's rank_block (every parameter) and
//     samples (a name filter), and ClickHouse's rank_steps and points (the same two questions).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/series/op_aggregate.hpp"
#include "core/series/step_columns.hpp"
#include "store/clickhouse/clickhouse_reader.hpp"
#include "store/clickhouse/clickhouse_rules_sql.hpp"
#include "store/clickhouse/clickhouse_schema.hpp"
#include "store/reader.hpp"
#include "store/sqlite_ingest_store.hpp"
#include "tests/support/chart_render.hpp"
#include "tests/support/cluster_services.hpp"
#include "tests/support/test_env.hpp"
#include "tui/widgets/downsample.hpp"

namespace msmon::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

struct ColumnCase {
    std::int64_t lo, hi;
    int columns;
    std::int64_t step;
    std::int64_t column;  // -1 left of the window, `columns` right of it
};

// floor((step - lo) * columns / (hi - lo + 1)), worked out by hand.
const ColumnCase kColumnCases[] = {
    {0, 9, 5, -1, -1},
    {0, 9, 5, 10, 5},
    {0, 9, 5, 0, 0},
    {0, 9, 5, 1, 0},
    {0, 9, 5, 2, 1},
    {0, 9, 5, 9, 4},
    {0, 2, 8, 0, 0},  // a window narrower in steps than in columns: steps land 8/3 columns apart
    {0, 2, 8, 1, 2},
    {0, 2, 8, 2, 5},
    {-500, 16000, 133, 7777, 66},  // 8277 * 133 / 16501 = 66.7
    {-500, 16000, 133, -500, 0},
    {-500, 16000, 133, 16000, 132},
    {1'000'000'000'000, 1'000'000'000'399, 400, 1'000'000'000'123, 123},
    {kMax - 10, kMax, 3, kMax, 2},  // 10 * 3 / 11 = 2.7
    {kMax - 10, kMax, 3, kMax - 7, 0},
    {-kMax, kMax, 400, kMax, 399},  // spans past 64 bits: 128-bit arithmetic
    {-kMax, kMax, 400, 0, 199},     // kMax * 400 / (2 * kMax + 1) = 199.99…
    {-kMax, kMax, 400, -kMax, 0},
};

std::string case_name(const ColumnCase& c) {
    return "steps " + std::to_string(c.lo) + ".." + std::to_string(c.hi) + " on " + std::to_string(c.columns) +
           " columns, step " + std::to_string(c.step);
}

TEST(SeriesRules, step_columns_split_every_case_as_the_table_says) {
    for (const auto& c : kColumnCases) {
        const StepColumns split(c.lo, c.hi, c.columns);
        EXPECT_EQ(split.column(c.step), c.column) << case_name(c);
        if (c.column >= 0 && c.column < c.columns) {
            const int col = static_cast<int>(c.column);
            EXPECT_LE(split.first_step(col), c.step) << case_name(c);
            EXPECT_GE(split.last_step(col), c.step) << case_name(c);
        }
    }
}

TEST(SeriesRules, downsample_minmax_puts_each_step_in_the_column_of_the_table) {
    for (const auto& c : kColumnCases) {
        const auto cols = tui::downsample_minmax({{c.step, 1.5}}, c.lo, c.hi, c.columns);
        ASSERT_EQ(cols.size(), static_cast<std::size_t>(c.columns));
        std::int64_t found = -1;
        for (std::size_t i = 0; i < cols.size(); ++i)
            if (cols[i].count > 0) found = static_cast<std::int64_t>(i);
        const std::int64_t expected = c.column < 0 || c.column >= c.columns ? -1 : c.column;
        EXPECT_EQ(found, expected) << case_name(c);
        if (found >= 0) {
            EXPECT_LE(cols[static_cast<std::size_t>(found)].first_step, c.step) << case_name(c);
            EXPECT_GE(cols[static_cast<std::size_t>(found)].last_step, c.step) << case_name(c);
        }
    }
}

// The braille chart in ASCII (one pixel per cell): a NaN at the step is marked '!' on the plot's top row, in the
// step's pixel column.
TEST(SeriesRules, the_chart_marks_a_nan_in_the_column_of_the_table) {
    for (const auto& c : kColumnCases) {
        ChartFrame frame;
        frame.lo = c.lo, frame.hi = c.hi;
        frame.unicode = false;
        frame.height = 8;
        const std::vector<RankSeries> series{{0, {{c.lo, 1.0}, {c.step, kNaN}, {c.hi, 2.0}}}};
        RenderedChart chart;
        for (frame.width = c.columns; frame.width < c.columns + 40; ++frame.width) {  // a plot exactly that wide
            chart = render_chart(series, frame);
            if (chart.plot_columns >= c.columns) break;
        }
        ASSERT_EQ(chart.plot_columns, c.columns) << case_name(c);
        const int plot_x = frame.width - c.columns;
        std::vector<int> marks;
        for (int y = 0; y < frame.height; ++y)
            for (int x = 0; x < frame.width; ++x)
                if (chart.buffer.at(x, y).ch == U'!') marks.push_back(x - plot_x);
        if (c.column < 0 || c.column >= c.columns) {
            EXPECT_TRUE(marks.empty()) << case_name(c) << "\n" << chart.buffer.to_text();
        } else {
            ASSERT_EQ(marks.size(), 1u) << case_name(c) << "\n" << chart.buffer.to_text();
            EXPECT_EQ(marks[0], c.column) << case_name(c) << "\n" << chart.buffer.to_text();
        }
    }
}

struct OpCase {
    const char* op;
    std::vector<double> values;  // one per tensor, all on rank 0 at one step
    double expected;             // NaN: the step reads NaN
};

const OpCase kOpCases[] = {
    {"norm", {3, 4, 0}, 5},  // the norm of the tensors together
    {"norm", {-3, 4}, 5},          {"norm", {12}, 12},        {"max", {-1, 2, 0.5}, 2},
    {"max", {-7, -3}, -3},         {"min", {-1, 2, 0.5}, -1}, {"mean", {1, 2, 6}, 3},
    {"mean", {-2, 2}, 0},          {"nans", {1, 0, 2}, 3},  // a count: summed
    {"zeros", {0.5, 0.25}, 0.375},                          // any other op: the mean
    {"norm", {3, kNaN, 4}, kNaN},                           // a NaN shows
    {"max", {kNaN, 1}, kNaN},      {"mean", {kNaN}, kNaN},    {"max", {kInf, 1}, kInf},
    {"min", {-kInf, 1}, -kInf},
};
constexpr const char* kOps = "norm,max,min,mean,nans,zeros";
constexpr int kOpCount = 6;
constexpr std::size_t kTensors = 3;

int slot_of(const std::string& op) {
    const std::string ops = kOps;
    int slot = 0;
    for (std::size_t at = 0; at < ops.find(op); ++at) slot += ops[at] == ',';
    return slot;
}

// Case i is step 10 + i.
std::int64_t step_of(std::size_t i) {
    return 10 + static_cast<std::int64_t>(i);
}

std::string describe(const OpCase& c) {
    std::string s = std::string(c.op) + " of {";
    for (double v : c.values) s += std::to_string(v) + " ";
    return s + "}";
}

void expect_value(double got, double expected, const std::string& what) {
    if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(got)) << what << ": " << got;
    } else {
        EXPECT_DOUBLE_EQ(got, expected) << what;
    }
}

// The value at `step` of rank 0's series, or a note saying it is missing.
double value_at(const std::vector<RankSeries>& series, std::int64_t step, const std::string& what) {
    for (const auto& rs : series)
        if (rs.rank == 0)
            for (const auto& p : rs.points)
                if (p.step == step) return p.value;
    ADD_FAILURE() << what << ": no value at step " << step;
    return 0;
}

TEST(SeriesRules, the_aggregate_arithmetic_gives_the_table) {
    for (const auto& c : kOpCases) {
        const AggregateRule rule = aggregate_rule(c.op);
        StepAggregate whole, left, right;
        for (std::size_t i = 0; i < c.values.size(); ++i) {
            add_value(rule, whole, c.values[i]);
            add_value(rule, i % 2 ? right : left, c.values[i]);
        }
        expect_value(final_value(rule, whole), c.expected, describe(c));
        combine(rule, left, right);  // what a later commit's delta does to a step
        expect_value(final_value(rule, left), c.expected, describe(c) + " combined");
    }
}

TEST(SeriesRules, sqlite_rank_block_and_samples_aggregate_as_the_table) {
    TempDir tmp;
    const std::string db = tmp / "s.db";
    {
        SqliteIngestStore store(db);
        RecordBatch keys;
        keys.new_runs = {{1, 0, "/job/rank0", "a", "x", "msprobe"}};
        keys.new_layouts = {{1, kOps}};
        for (std::size_t t = 1; t <= kTensors; ++t)
            keys.new_tensors.push_back(
                {static_cast<std::int64_t>(t), 1, "grad_reduced", "0", "t" + std::to_string(t), std::nullopt, 1});
        store.commit(keys);
        RecordBatch rows;
        for (std::size_t i = 0; i < std::size(kOpCases); ++i) {
            const auto& c = kOpCases[i];
            for (std::size_t t = 0; t < c.values.size(); ++t) {
                SampleRow r;
                r.tensor_id = static_cast<std::int64_t>(t + 1);
                r.step = step_of(i);
                r.layout_id = 1;
                r.value_count = kOpCount;
                r.values[slot_of(c.op)] = c.values[t];
                rows.rows.push_back(r);
            }
        }
        store.commit(rows);
    }
    auto reader = open_sqlite_reader(db);
    for (std::size_t i = 0; i < std::size(kOpCases); ++i) {
        const auto& c = kOpCases[i];
        const auto every = reader->rank_series({"grad_reduced", c.op, std::nullopt, 0, {}});
        expect_value(value_at(every, step_of(i), describe(c)), c.expected, "rank_block: " + describe(c));
        const auto filtered = reader->rank_series({"grad_reduced", c.op, std::string("^t"), 0, {}});
        expect_value(value_at(filtered, step_of(i), describe(c)), c.expected, "samples: " + describe(c));
    }
}

class ClickHouseRules : public ::testing::Test {
protected:
    void SetUp() override {
        if (find_installed("clickhouse-server").empty())
            GTEST_SKIP() << "clickhouse-server is not installed (scripts/setup-cluster-deps.sh installs it)";
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
