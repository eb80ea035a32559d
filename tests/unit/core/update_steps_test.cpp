// The update ratio's one definition, one weight's recent ratios, and the step-level decision: most weights of
// most ranks jumping at one step, found once for a lasting change.
#include "core/detect/update_steps.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace msmon {
namespace {

TEST(UpdateRatio, is_the_change_of_the_norm_relative_to_the_weight_before_the_update) {
    EXPECT_DOUBLE_EQ(*update_ratio(2.0, 2.5), 0.25);
    EXPECT_DOUBLE_EQ(*update_ratio(2.0, 1.5), 0.25);
    EXPECT_DOUBLE_EQ(*update_ratio(-2.0, -2.5), 0.25);
    EXPECT_FALSE(update_ratio(0.0, 1.0)) << "a weight with no size has no ratio";
    EXPECT_TRUE(std::isnan(*update_ratio(NAN, 1.0))) << "a NaN weight is charted as NaN";
}

TEST(UpdateHistory, a_ratio_is_judged_after_four_and_jumps_at_ten_times_the_recent_median) {
    UpdateHistory h;
    for (double r : {1e-3, 2e-3, 1.5e-3, 1e-3}) EXPECT_FALSE(h.add(r).judged);
    const auto normal = h.add(5e-3);
    EXPECT_TRUE(normal.judged);
    EXPECT_FALSE(normal.jumped);
    EXPECT_NEAR(normal.median, 1.2247e-3, 1e-6);  // between 1e-3 and 1.5e-3 on log scale
    const auto jump = h.add(0.05);
    EXPECT_TRUE(jump.jumped);
    EXPECT_FALSE(h.add(0.0).judged) << "no change of the norm: nothing to judge, nothing kept";
}

RankUpdateTally tally(int rank, int judged, int jumped) {
    RankUpdateTally t;
    t.rank = rank;
    t.judged = judged;
    t.jumped = jumped;
    return t;
}

TEST(OptimizerJump, most_weights_on_three_of_four_ranks_is_a_jump_found_once_until_it_settles) {
    bool open = false;
    EXPECT_TRUE(optimizer_jump({tally(0, 24, 1), tally(1, 24, 2), tally(2, 24, 0), tally(3, 24, 1)}, open).empty());
    EXPECT_TRUE(optimizer_jump({tally(0, 24, 24), tally(1, 24, 3), tally(2, 24, 2), tally(3, 24, 1)}, open).empty())
        << "one rank: not the optimizer of the job";
    const std::vector<RankUpdateTally> step35 = {tally(0, 24, 18), tally(1, 24, 18), tally(2, 24, 13), tally(3, 24, 5)};
    const auto jumped = optimizer_jump(step35, open);
    ASSERT_EQ(jumped.size(), 3u);
    EXPECT_EQ(jumped[0]->rank, 0);
    EXPECT_EQ(jumped[2]->rank, 2);
    EXPECT_TRUE(open);
    // The next steps still jump while the medians catch up: the same change, not found again.
    EXPECT_TRUE(optimizer_jump({tally(0, 24, 20), tally(1, 24, 20), tally(2, 24, 20), tally(3, 24, 20)}, open).empty());
    // Settled (no rank jumps), then a second change is found again.
    EXPECT_TRUE(optimizer_jump({tally(0, 24, 0), tally(1, 24, 1), tally(2, 24, 0), tally(3, 24, 0)}, open).empty());
    EXPECT_FALSE(open);
    EXPECT_EQ(optimizer_jump({tally(0, 24, 20), tally(1, 24, 20), tally(2, 24, 20), tally(3, 24, 20)}, open).size(),
              4u);
}

}  // namespace
}  // namespace msmon
