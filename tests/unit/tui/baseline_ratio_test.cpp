// The ratio to a baseline: aligned by step, flagged where it leaves x1.5 for 3 steps in a row (not for one noisy
// step), steps without a baseline value counted, not divided.
#include "tui/models/baseline_ratio.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace msmon::tui {
namespace {

std::vector<StepValue> series(std::int64_t from, const std::vector<double>& values) {
    std::vector<StepValue> out;
    for (std::size_t i = 0; i < values.size(); ++i) out.push_back({from + static_cast<std::int64_t>(i), values[i]});
    return out;
}

TEST(BaselineRatio, a_drift_is_flagged_where_it_stays_beyond_the_factor) {
    const auto base = series(0, {1, 1, 1, 1, 1, 1, 1, 1});
    const auto cur = series(0, {1, 2, 1, 1.6, 1.7, 1.8, 2.5, 1});  // one noisy step at 1; from 3 on a drift
    const auto r = ratio_to_baseline(cur, base);
    ASSERT_EQ(r.points.size(), 8u);
    ASSERT_TRUE(r.parted_from.has_value());
    EXPECT_EQ(*r.parted_from, 3);
    EXPECT_DOUBLE_EQ(r.farthest, 2.5);
    EXPECT_EQ(r.farthest_step, 6);
    EXPECT_EQ(r.summary, "ratio to baseline: beyond x1.5 from step 3, farthest x2.5 at step 6");
}

TEST(BaselineRatio, a_drop_counts_as_much_as_a_rise_and_unmatched_steps_are_counted) {
    const auto base = series(0, {2, 2, 2, 2, 0});
    const auto cur = series(0, {2, 1, 1, 1, 1, 5, 6});  // halved from step 1; step 4 divides by 0; 5-6 longer
    const auto r = ratio_to_baseline(cur, base);
    ASSERT_TRUE(r.parted_from.has_value());
    EXPECT_EQ(*r.parted_from, 1);
    EXPECT_DOUBLE_EQ(r.farthest, 0.5);
    EXPECT_EQ(r.unmatched, 3u);
    EXPECT_EQ(r.summary,
              "ratio to baseline: beyond x1.5 from step 1, farthest x0.5 at step 1, 3 steps without a baseline value");
}

TEST(BaselineRatio, the_same_run_is_within_and_nan_is_not_divided) {
    const auto base = series(10, {1, 2, 3});
    auto cur = series(10, {1, 2, std::nan("")});
    const auto r = ratio_to_baseline(cur, base);
    EXPECT_FALSE(r.parted_from.has_value());
    EXPECT_EQ(r.points.size(), 2u);
    EXPECT_EQ(r.summary,
              "ratio to baseline: never 3 steps in a row beyond x1.5, farthest x1 at step 10, 1 step without a "
              "baseline value");
}

}  // namespace
}  // namespace msmon::tui
