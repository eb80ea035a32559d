// One table for each of core/series' two rules, run through every place that applies it, so none can drift:
//   the step -> pixel column split (step_columns.hpp): StepColumns itself, downsample_minmax, the braille chart's
//     own marks, and ClickHouse's SQL for it (tests/cluster/series_rules_clickhouse_test.cpp);
//   the op -> aggregate rule (op_aggregate.hpp): the arithmetic itself, SQLite's rank_block (every parameter) and
//     samples (a name filter), and ClickHouse's rank_steps and points (the same two questions, in tests/cluster).
// The tables are tests/support/series_rule_cases.hpp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/series/op_aggregate.hpp"
#include "core/series/step_columns.hpp"
#include "store/reader.hpp"
#include "store/sqlite_ingest_store.hpp"
#include "tests/support/chart_render.hpp"
#include "tests/support/series_rule_cases.hpp"
#include "tests/support/test_env.hpp"
#include "tui/widgets/downsample.hpp"

namespace msmon::test {
namespace {

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

}  // namespace
}  // namespace msmon::test
