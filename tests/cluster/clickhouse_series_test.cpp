// Downsampling pushed into ClickHouse: a chart's series read with the plot's width moves a few rows per pixel
// column and draws exactly what every step draws (the same contract as store/series_reduction.hpp, computed in
// SQL by store/clickhouse/clickhouse_series.cpp), against a real clickhouse-server started by the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "store/clickhouse/clickhouse_reader.hpp"
#include "store/clickhouse/clickhouse_schema.hpp"
#include "tests/support/chart_render.hpp"
#include "tests/support/cluster_services.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

// 3 ranks × 2 names × ~17k steps with gaps; NaN, ±Inf, zeros, negative values and spikes, all made by the server.
const char* kInsert =
    "INSERT INTO msmon_series.points (job, node, spool, seq, rank, run, kind, vpp_stage, name, micro_step, step, op, "
    "op_ord, tensor_ord, is_text, value, text) SELECT 'job-series', 'node0', 1, number, toInt32(number % 3), 'run', "
    "'grad_reduced', '', concat('layer', toString(intDiv(number, 3) % 2)), -1, toInt64(intDiv(number, 6)) * 2 - 500, "
    "op, 0, 0, 0, multiIf(h % 997 = 0, nan, h % 1499 = 1, inf, h % 1999 = 2, -inf, h % 211 = 3, 0, "
    "(sin(number / 900) * (1 + number % 3) + (h % 1000) / 4000) * if(h % 1201 = 4, 1000, 1)), '' FROM "
    "(SELECT number, cityHash64(number) AS h, arrayJoin(['norm', 'mean']) AS op FROM numbers(120000) "
    "WHERE number % 97 >= 6)";

// A server of its own holding the generated job in points only, as an agent older than the summaries left it.
class ClickHouseSeries : public ::testing::Test {
protected:
    void SetUp() override {
        if (find_installed("clickhouse-server").empty())
            MSMON_SKIP_UNLESS_REQUIRED(
                "clickhouse-server is not installed (scripts/setup-cluster-deps.sh installs it)");
        ch_ = std::make_unique<ClickHouseTestServer>(tmp_ / "clickhouse");
        ASSERT_TRUE(ch_->ready()) << "clickhouse-server did not start: " << ch_->log();
        const auto ddl = clickhouse_ddl("msmon_series");
        ch_->scalar(ddl[0]);  // the database
        ch_->scalar(ddl[1]);  // points
        ch_->scalar(kInsert);
    }
    TempDir tmp_;
    std::unique_ptr<ClickHouseTestServer> ch_;
};

TEST_F(ClickHouseSeries, a_windowed_series_draws_exactly_as_every_step_and_moves_few_rows) {
    auto& ch = *ch_;
    // Opening makes the rest of the schema and works out series and rank_steps from the values.
    auto reader = open_clickhouse_reader(ch.target("msmon_series"), "job-series");

    // What msprobe collected lately (the config view), from rank_steps: the newest steps of the values.
    std::string newest;
    for (auto step : reader->collected_steps(4)) newest += std::to_string(step) + " ";
    EXPECT_EQ(newest, ch.scalar("SELECT arrayStringConcat(groupArray(toString(step)), ' ') FROM (SELECT DISTINCT step "
                                "FROM msmon_series.points ORDER BY step DESC LIMIT 4)") +
                          " ");

    std::mt19937_64 rng(7);
    for (const std::string op : {"norm", "mean"}) {
        // Every parameter (rank_steps) and a name filter (aggregated from points): the same series.
        RankSeriesRequest every{"grad_reduced", op, std::nullopt, 0, {}};
        const auto full = reader->rank_series(every);
        RankSeriesRequest filtered = every;
        filtered.name_regex = "layer";
        const auto full_from_points = reader->rank_series(filtered);
        ASSERT_EQ(full_from_points.size(), full.size());
        for (std::size_t i = 0; i < full.size(); ++i) {
            ASSERT_EQ(full[i].rank, full_from_points[i].rank);
            ASSERT_EQ(full[i].points.size(), full_from_points[i].points.size());
            for (std::size_t k = 0; k < full[i].points.size(); ++k) {
                const auto &a = full[i].points[k], &b = full_from_points[i].points[k];
                ASSERT_EQ(a.step, b.step);
                if (!(std::isnan(a.value) && std::isnan(b.value))) {
                    ASSERT_DOUBLE_EQ(a.value, b.value) << op << " rank " << full[i].rank << " step " << a.step;
                }
            }
        }
        ASSERT_EQ(full.size(), 3u);
        std::size_t full_points = 0;
        for (const auto& rs : full) full_points += rs.points.size();
        ASSERT_GT(full_points, 50000u);
        const std::int64_t first = full[0].points.front().step, last = full[0].points.back().step;
        for (int frame_no = 0; frame_no < 12; ++frame_no) {
            ChartFrame frame;
            frame.width = 40 + static_cast<int>(rng() % 120);
            frame.height = 8 + static_cast<int>(rng() % 20);
            frame.log_y = frame_no % 3 == 1;
            RankSeriesRequest req = frame_no % 4 == 3 ? filtered : every;
            frame.lo = first, frame.hi = last;
            if (frame_no % 2) {  // zoomed somewhere, some narrower in steps than the plot in pixels
                frame.lo = first + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(last - first));
                frame.hi = frame.lo + static_cast<std::int64_t>(rng() % (frame_no % 4 == 1 ? 150 : 9000));
                req.window.lo = frame.lo, req.window.hi = frame.hi;
            }
            if (frame_no % 3 != 2)
                frame.cursor =
                    frame.lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(frame.hi - frame.lo + 1));
            const auto expected = render_chart(full, frame);
            req.window.columns = expected.plot_columns;
            req.window.keep_step = frame.cursor;
            const auto windowed = reader->rank_series(req);
            std::size_t points = 0;
            for (const auto& rs : windowed) points += rs.points.size();
            EXPECT_LE(points, 3u * (13u * static_cast<std::size_t>(req.window.columns) + 8u))
                << "per column at most 13 points";
            const auto got = render_chart(windowed, frame);
            ASSERT_EQ(first_difference(expected.buffer, got.buffer), "")
                << op << " frame " << frame_no << ": steps " << frame.lo << ".." << frame.hi << " on "
                << req.window.columns << " columns, log " << frame.log_y << ", " << full_points << " -> " << points;
            if (frame_no == 0) {
                EXPECT_LT(points * 10, full_points) << "the whole run on one plot moves a tenth of the rows or less";
            }
        }
    }
}

// What there is comes from the series summary; a store made before it existed is summarised on first open.
TEST_F(ClickHouseSeries, the_catalog_of_a_store_made_before_the_series_summary_equals_a_scan_of_its_points) {
    auto& ch = *ch_;
    ASSERT_EQ(ch.scalar("EXISTS TABLE msmon_series.series"), "0");

    auto reader = open_clickhouse_reader(ch.target("msmon_series"), "job-series");
    const auto catalog = reader->catalog();
    ASSERT_EQ(catalog.kinds.size(), 1u);
    EXPECT_EQ(catalog.kinds[0].first, "grad_reduced");
    EXPECT_EQ(catalog.kinds[0].second, (std::vector<std::string>{"mean", "norm"}));
    EXPECT_EQ(catalog.ranks, (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(std::to_string(catalog.min_step), ch.scalar("SELECT min(step) FROM msmon_series.points"));
    EXPECT_EQ(std::to_string(catalog.max_step), ch.scalar("SELECT max(step) FROM msmon_series.points"));
    std::string last_steps;
    for (const auto& [rank, step] : reader->rank_last_steps())
        last_steps += std::to_string(rank) + ":" + std::to_string(step) + " ";
    EXPECT_EQ(last_steps,
              ch.scalar("SELECT arrayStringConcat(groupArray(concat(toString(rank), ':', toString(s))), ' ') "
                        "FROM (SELECT rank, max(step) AS s FROM msmon_series.points GROUP BY rank ORDER BY rank)") +
                  " ");

    // Values shipped after the summary exists are summarised as they land.
    ch.scalar(
        "INSERT INTO msmon_series.points (job, rank, kind, name, step, op, value) VALUES "
        "('job-series', 7, 'actv', 'layer9.output', 123456, 'max', 1.5)");
    const auto after = reader->catalog();
    EXPECT_EQ(after.ranks, (std::vector<int>{0, 1, 2, 7}));
    EXPECT_EQ(after.max_step, 123456);
    ASSERT_EQ(after.kinds.size(), 2u);
    EXPECT_EQ(after.kinds[0].first, "actv");
}

// The Layers tab's reads answered by ClickHouse itself: a rank's tensors in forward order and the rows'
// series over a window, equal to what the generic answer through points() gives, a restart's values winning.
TEST_F(ClickHouseSeries, module_rows_and_module_series_equal_the_answer_through_points) {
    auto& ch = *ch_;
    // A restart on rank 0: run2 writes layer0 again over steps 0-99 (other values) and a new tensor, layer2; its
    // files list layer2 first.
    ch.scalar(
        "INSERT INTO msmon_series.points (job, node, spool, seq, rank, run, kind, vpp_stage, name, micro_step, step, "
        "op, op_ord, tensor_ord, is_text, value, text) SELECT 'job-series', 'node0', 2, 1000000 + number, 0, 'run2', "
        "'grad_reduced', '', if(number % 2 = 0, 'layer0', 'layer2'), -1, toInt64(intDiv(number, 2)), 'norm', 0, "
        "if(number % 2 = 0, 1, 0), 0, 1000 + number, '' FROM numbers(200)");
    auto reader = open_clickhouse_reader(ch.target("msmon_series"), "job-series");
    for (int rank : {0, 1}) {
        const auto rows = reader->module_rows("grad_reduced", rank);
        EXPECT_EQ(rows, reader->Reader::module_rows("grad_reduced", rank)) << "rank " << rank;
        ASSERT_GE(rows.size(), 2u);
        EXPECT_EQ(rows[0].name, "layer0");
        if (rank == 0) {
            ASSERT_EQ(rows.size(), 3u);
            EXPECT_EQ(rows[2].name, "layer2");  // the restart's new tensor after the first run's
        }
        for (const SeriesWindow window : {SeriesWindow{}, SeriesWindow{-100, 300, 0, std::nullopt},
                                          SeriesWindow{0, 60, 0, std::nullopt}, SeriesWindow{{}, {}, 200, 5000}}) {
            const ModuleSeriesRequest req{"grad_reduced", "norm", rank, rows, window};
            const auto mine = reader->module_series(req);
            const auto generic = reader->Reader::module_series(req);
            ASSERT_EQ(mine.size(), generic.size());
            for (std::size_t i = 0; i < mine.size(); ++i) {
                ASSERT_EQ(mine[i].size(), generic[i].size()) << "rank " << rank << " row " << rows[i].name;
                for (std::size_t k = 0; k < mine[i].size(); ++k) {
                    ASSERT_EQ(mine[i][k].step, generic[i][k].step);
                    if (!(std::isnan(mine[i][k].value) && std::isnan(generic[i][k].value))) {
                        ASSERT_DOUBLE_EQ(mine[i][k].value, generic[i][k].value);
                    }
                }
            }
            if (rank == 0 && !window.columns) {  // the restart's value where both runs wrote a step
                const auto at10 =
                    std::find_if(mine[0].begin(), mine[0].end(), [](const StepValue& p) { return p.step == 10; });
                ASSERT_NE(at10, mine[0].end());
                EXPECT_DOUBLE_EQ(at10->value, 1020);
            }
        }
    }
}

}  // namespace
}  // namespace msmon::test
