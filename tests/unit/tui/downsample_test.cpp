// Unit tests for tui/widgets/downsample: spikes survive, columns tile the step range, NaN/Inf are flagged.
#include "tui/widgets/downsample.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace msmon::tui {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<SeriesPoint> flat(std::int64_t from, std::int64_t to, double value) {
    std::vector<SeriesPoint> out;
    for (std::int64_t s = from; s <= to; ++s) out.push_back({s, value});
    return out;
}

int total_count(const std::vector<ColumnStat>& cols) {
    int n = 0;
    for (const auto& c : cols) n += c.count;
    return n;
}

TEST(Downsample, one_step_spike_among_ten_thousand_points_is_a_column_max) {
    auto points = flat(0, 9999, 1.0);
    points[6789].value = 1000.0;
    const auto cols = downsample_minmax(points, 0, 9999, 50);
    ASSERT_EQ(cols.size(), 50u);
    const auto spike_col = static_cast<std::size_t>(6789 * 50 / 10000);
    EXPECT_EQ(cols[spike_col].max, 1000.0);
    EXPECT_EQ(cols[spike_col].min, 1.0);
    for (std::size_t c = 0; c < cols.size(); ++c) {
        EXPECT_EQ(cols[c].count, 200) << c;
        if (c != spike_col) {
            EXPECT_EQ(cols[c].max, 1.0) << c;
        }
    }
}

TEST(Downsample, columns_tile_the_step_range_without_gaps_or_overlap) {
    const auto cols = downsample_minmax({}, 3, 1002, 7);
    ASSERT_EQ(cols.size(), 7u);
    EXPECT_EQ(cols.front().first_step, 3);
    EXPECT_EQ(cols.back().last_step, 1002);
    for (std::size_t c = 1; c < cols.size(); ++c) EXPECT_EQ(cols[c].first_step, cols[c - 1].last_step + 1);
    for (const auto& c : cols) {
        EXPECT_EQ(c.count, 0);
        EXPECT_FALSE(c.has_nan || c.has_pos_inf || c.has_neg_inf);
    }
}

TEST(Downsample, each_point_lands_in_the_column_whose_steps_cover_it) {
    const auto points = flat(0, 999, 0.5);
    const auto cols = downsample_minmax(points, 0, 999, 13);
    EXPECT_EQ(total_count(cols), 1000);
    for (const auto& c : cols) EXPECT_EQ(c.count, c.last_step - c.first_step + 1);
}

TEST(Downsample, nan_and_infinities_are_flagged_not_counted) {
    const std::vector<SeriesPoint> points = {{0, 2.0}, {1, kNaN}, {2, kInf}, {3, -kInf}, {4, 5.0}};
    const auto cols = downsample_minmax(points, 0, 4, 1);
    ASSERT_EQ(cols.size(), 1u);
    EXPECT_EQ(cols[0].count, 2);
    EXPECT_TRUE(cols[0].has_nan);
    EXPECT_TRUE(cols[0].has_pos_inf);
    EXPECT_TRUE(cols[0].has_neg_inf);
    EXPECT_EQ(cols[0].min, 2.0);
    EXPECT_EQ(cols[0].max, 5.0);
}

TEST(Downsample, nan_flag_stays_in_its_own_column) {
    auto points = flat(0, 99, 1.0);
    points[42].value = kNaN;
    const auto cols = downsample_minmax(points, 0, 99, 10);
    for (std::size_t c = 0; c < cols.size(); ++c) EXPECT_EQ(cols[c].has_nan, c == 4) << c;
    EXPECT_EQ(cols[4].count, 9);
}

TEST(Downsample, last_is_the_latest_finite_value_in_the_column) {
    const std::vector<SeriesPoint> points = {{0, 1.0}, {1, 7.0}, {2, 3.0}, {3, kNaN}};
    const auto cols = downsample_minmax(points, 0, 3, 1);
    EXPECT_EQ(cols[0].last, 3.0);
}

TEST(Downsample, last_follows_point_order_across_a_restart) {
    // Steps 5..6 then a restart back to 5: the value written last is the latest.
    const std::vector<SeriesPoint> points = {{5, 1.0}, {6, 2.0}, {5, 9.0}};
    const auto cols = downsample_minmax(points, 5, 6, 1);
    EXPECT_EQ(cols[0].last, 9.0);
    EXPECT_EQ(cols[0].count, 3);
}

TEST(Downsample, unsorted_points_give_the_same_columns_as_sorted_ones) {
    std::vector<SeriesPoint> sorted;
    for (std::int64_t s = 0; s < 200; ++s) sorted.push_back({s, std::sin(s * 0.37) * 10});
    sorted[77].value = kNaN;
    std::vector<SeriesPoint> shuffled;
    for (std::size_t i = 0; i < sorted.size(); ++i) shuffled.push_back(sorted[(i * 73) % sorted.size()]);
    const auto a = downsample_minmax(sorted, 0, 199, 9);
    const auto b = downsample_minmax(shuffled, 0, 199, 9);
    for (std::size_t c = 0; c < a.size(); ++c) {
        EXPECT_EQ(a[c].count, b[c].count) << c;
        EXPECT_EQ(a[c].min, b[c].min) << c;
        EXPECT_EQ(a[c].max, b[c].max) << c;
        EXPECT_EQ(a[c].has_nan, b[c].has_nan) << c;
    }
}

TEST(Downsample, fewer_steps_than_columns_leaves_empty_columns) {
    const std::vector<SeriesPoint> points = {{0, 1.0}, {1, 2.0}, {2, 3.0}};
    const auto cols = downsample_minmax(points, 0, 2, 10);
    ASSERT_EQ(cols.size(), 10u);
    int filled = 0;
    for (const auto& c : cols) {
        if (c.count > 0) {
            ++filled;
            EXPECT_EQ(c.first_step, c.last_step);
        } else {
            EXPECT_GT(c.first_step, c.last_step);  // a column narrower than one step covers none
        }
    }
    EXPECT_EQ(filled, 3);
    EXPECT_EQ(cols[0].max, 1.0);
}

TEST(Downsample, single_step_range_puts_the_point_in_one_column) {
    const std::vector<SeriesPoint> points = {{42, 3.5}};
    const auto cols = downsample_minmax(points, 42, 42, 5);
    EXPECT_EQ(total_count(cols), 1);
    EXPECT_EQ(cols[0].count, 1);
    EXPECT_EQ(cols[0].max, 3.5);
    EXPECT_EQ(cols[0].first_step, 42);
    EXPECT_EQ(cols[0].last_step, 42);
}

TEST(Downsample, negative_steps_are_binned_like_any_others) {
    const auto points = flat(-100, -1, 2.0);
    const auto cols = downsample_minmax(points, -100, -1, 4);
    ASSERT_EQ(cols.size(), 4u);
    EXPECT_EQ(cols[0].first_step, -100);
    EXPECT_EQ(cols[0].last_step, -76);
    EXPECT_EQ(cols[3].last_step, -1);
    for (const auto& c : cols) EXPECT_EQ(c.count, 25);
}

TEST(Downsample, points_outside_the_range_are_ignored) {
    const auto points = flat(0, 99, 1.0);
    const auto cols = downsample_minmax(points, 10, 19, 5);
    EXPECT_EQ(total_count(cols), 10);
}

TEST(Downsample, extreme_step_range_does_not_overflow) {
    const std::int64_t lo = std::numeric_limits<std::int64_t>::min() + 1;
    const std::int64_t hi = std::numeric_limits<std::int64_t>::max() - 1;
    const std::vector<SeriesPoint> points = {{lo, 1.0}, {0, 2.0}, {hi, 3.0}};
    const auto cols = downsample_minmax(points, lo, hi, 8);
    EXPECT_EQ(cols.front().max, 1.0);
    EXPECT_EQ(cols[4].max, 2.0);
    EXPECT_EQ(cols.back().max, 3.0);
    EXPECT_EQ(cols.front().first_step, lo);
    EXPECT_EQ(cols.back().last_step, hi);
}

TEST(Downsample, no_columns_or_inverted_range_gives_nothing_to_draw) {
    EXPECT_TRUE(downsample_minmax(flat(0, 9, 1.0), 0, 9, 0).empty());
    const auto cols = downsample_minmax(flat(0, 9, 1.0), 9, 0, 3);
    ASSERT_EQ(cols.size(), 3u);
    EXPECT_EQ(total_count(cols), 0);
}

}  // namespace
}  // namespace msmon::tui
