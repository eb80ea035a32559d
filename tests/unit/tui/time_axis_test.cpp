// Steps on a time axis: a pause over 10 medians (and a second) clipped to two medians and recorded; positions map
// back to steps; labels in wall-clock time or time since the first step, the pause counted whole.
#include "tui/models/time_axis.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace msmon::tui {
namespace {

TEST(TimeAxis, a_long_pause_is_clipped_to_two_median_steps_and_recorded) {
    std::vector<StepWallTime> times;
    for (std::int64_t s = 0; s < 10; ++s) times.push_back({s, 1'000'000 + s * 2000 + (s >= 5 ? 600'000 : 0)});
    const TimeAxis axis(times);
    EXPECT_EQ(axis.median_ms(), 2000);
    ASSERT_EQ(axis.pauses().size(), 1u);
    EXPECT_EQ(axis.pauses()[0].after_step, 4);
    EXPECT_EQ(axis.pauses()[0].before_step, 5);
    EXPECT_EQ(axis.pauses()[0].ms, 602'000);
    EXPECT_EQ(*axis.x_of(4), 8000);
    EXPECT_EQ(*axis.x_of(5), 12000) << "clipped to two medians";
    EXPECT_EQ(*axis.x_of(9), 20000);
    EXPECT_FALSE(axis.x_of(-1).has_value());
    EXPECT_EQ(axis.step_at(12500), 5);
    EXPECT_EQ(axis.label(12000, XAxis::elapsed), "+10m10s") << "the pause counted whole";
    EXPECT_EQ(axis.label(0, XAxis::elapsed), "+0s");
}

TEST(TimeAxis, steady_steps_are_not_clipped_and_wall_labels_are_local_time) {
    ::setenv("TZ", "UTC", 1);
    std::vector<StepWallTime> times;
    for (std::int64_t s = 0; s < 5; ++s) times.push_back({s * 10, 1700000000000 + s * 500});
    const TimeAxis axis(times);
    EXPECT_TRUE(axis.pauses().empty());
    EXPECT_EQ(*axis.x_of(15), 500) << "a step without a time sits with the one before";
    EXPECT_EQ(axis.label(0, XAxis::wall), "22:13:20");
    EXPECT_EQ(duration_text(61'000), "61s");
    EXPECT_EQ(duration_text(7'384'000), "2h03m");
}

}  // namespace
}  // namespace msmon::tui
