// When the job-level judge judges a step (core/judge/step_readiness.hpp): once every rank of the step before has
// written it with as many values, or after the grace; in order; late ranks reported once.
#include "core/judge/step_readiness.hpp"

#include <gtest/gtest.h>

namespace msmon {
namespace {

using std::chrono::milliseconds;
using Clock = StepReadiness::Clock;

TEST(StepReadiness, a_step_is_ready_once_every_rank_of_the_step_before_wrote_as_many_values_or_after_the_grace) {
    StepReadiness r(milliseconds(5000));
    const auto t0 = Clock::now();
    // The first step has no step before it: it waits the grace.
    r.observe(10, 0, 6, t0);
    r.observe(10, 1, 6, t0);
    EXPECT_FALSE(r.ready(t0 + milliseconds(4999), false));
    ASSERT_EQ(r.ready(t0 + milliseconds(5000), false), 10);
    EXPECT_EQ(r.mark_judged(10), (std::vector<int>{0, 1}));
    // Step 11: rank 1 wrote half of its values; then all of them.
    r.observe(11, 0, 6, t0 + milliseconds(6000));
    r.observe(11, 1, 3, t0 + milliseconds(6000));
    EXPECT_FALSE(r.ready(t0 + milliseconds(6001), false));
    r.observe(11, 1, 6, t0 + milliseconds(6100));
    EXPECT_EQ(r.ready(t0 + milliseconds(6101), false), 11);
    r.mark_judged(11);
    // Step 12 without rank 1: judged after the grace; rank 1 coming later is late, reported once.
    r.observe(12, 0, 6, t0 + milliseconds(7000));
    EXPECT_FALSE(r.ready(t0 + milliseconds(11999), false));
    EXPECT_EQ(r.next_due(), t0 + milliseconds(12000));
    ASSERT_EQ(r.ready(t0 + milliseconds(12000), false), 12);
    EXPECT_EQ(r.mark_judged(12), (std::vector<int>{0}));
    // Half of its values first: not whole yet (it wrote 6 at step 11); then whole.
    r.observe(12, 1, 3, t0 + milliseconds(13000));
    EXPECT_TRUE(r.take_late(t0 + milliseconds(13001)).empty());
    EXPECT_EQ(r.next_late_due(), t0 + milliseconds(18000));
    r.observe(12, 1, 6, t0 + milliseconds(13100));
    const auto late = r.take_late(t0 + milliseconds(13101));
    ASSERT_EQ(late.size(), 1u);
    EXPECT_EQ(late[0].first, 12);
    EXPECT_EQ(late[0].second, (std::vector<int>{1}));
    EXPECT_TRUE(r.take_late(t0 + milliseconds(20000)).empty());
    EXPECT_EQ(r.judged_through(), 12);
    EXPECT_EQ(r.newest().at(1), 12);
}

TEST(StepReadiness, a_step_every_rank_of_the_next_step_wrote_is_ready_at_once) {
    StepReadiness r(milliseconds(5000));
    const auto t0 = Clock::now();
    // A judge starting on a running job: steps 4 and 5 there, no step judged before them.
    for (int rank : {0, 1, 2}) r.observe(4, rank, 6, t0);
    for (int rank : {0, 1}) r.observe(5, rank, 6, t0);
    ASSERT_EQ(r.ready(t0, false), 4);
    r.mark_judged(4);
    // Step 5 lacks rank 2, which wrote step 4: it waits for rank 2 or the grace, even with step 6 from ranks 0-1.
    for (int rank : {0, 1}) r.observe(6, rank, 6, t0);
    EXPECT_FALSE(r.ready(t0 + milliseconds(100), false));
    EXPECT_EQ(r.ready(t0 + milliseconds(5000), false), 5);
}

TEST(StepReadiness, steps_are_judged_in_order_and_final_judges_whatever_came) {
    StepReadiness r(milliseconds(5000));
    const auto t0 = Clock::now();
    r.observe(1, 0, 4, t0);
    r.mark_judged(1);
    // Step 3 complete, step 2 not: neither is ready (2 comes first).
    r.observe(2, 0, 2, t0);
    r.observe(3, 0, 4, t0);
    EXPECT_FALSE(r.ready(t0, false));
    EXPECT_EQ(r.ready(t0, true), 2);
}

TEST(StepReadiness, steps_judged_before_a_restart_are_neither_judged_again_nor_late) {
    StepReadiness r(milliseconds(100));
    const auto t0 = Clock::now();
    r.judged_before(20);
    r.observe(19, 0, 4, t0);
    r.observe(20, 0, 4, t0);
    r.observe(21, 0, 4, t0);
    EXPECT_EQ(r.ready(t0 + milliseconds(100), false), 21);
    EXPECT_TRUE(r.take_late(t0 + milliseconds(1000)).empty());
    EXPECT_EQ(r.oldest_kept(), 21);
}

TEST(StepReadiness, a_late_ranks_first_step_is_whole_once_it_wrote_a_later_one_and_holds_back_its_later_ones) {
    StepReadiness r(milliseconds(1000));
    const auto t0 = Clock::now();
    for (std::int64_t s = 1; s <= 3; ++s) {
        r.observe(s, 0, 4, t0);
        r.mark_judged(s);
    }
    // Rank 3's step 1 alone: its first step, nothing to measure it against; it waits the grace.
    r.observe(1, 3, 4, t0);
    EXPECT_TRUE(r.take_late(t0).empty());
    EXPECT_EQ(r.next_late_due(), t0 + milliseconds(1000));
    // Its steps 3 and 2: step 1 is whole now (it wrote later steps), and the three come in step order.
    r.observe(3, 3, 4, t0);
    r.observe(2, 3, 4, t0);
    const auto late = r.take_late(t0);
    ASSERT_EQ(late.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(late[i].first, static_cast<std::int64_t>(i + 1));
        EXPECT_EQ(late[i].second, (std::vector<int>{3}));
    }
}

// A node whose agent starts late ships its ranks' old steps and its new ones at once. Its new steps are judged with
// the others on time, but without its ranks: they are judged late, after their older steps, in their order.
TEST(StepReadiness, a_rank_with_older_steps_to_be_judged_late_is_judged_late_at_the_new_ones_too) {
    StepReadiness r(milliseconds(5000));
    const auto t0 = Clock::now();
    for (std::int64_t s = 0; s <= 2; ++s) {
        r.observe(s, 0, 4, t0);
        ASSERT_EQ(r.mark_judged(s), (std::vector<int>{0}));
    }
    for (std::int64_t s = 0; s <= 4; ++s) r.observe(s, 1, 4, t0);
    r.observe(3, 0, 4, t0);
    r.observe(4, 0, 4, t0);
    ASSERT_EQ(r.ready(t0, false), 3);
    EXPECT_EQ(r.mark_judged(3), (std::vector<int>{0})) << "rank 1 has steps 0-2 to be judged first";
    ASSERT_EQ(r.ready(t0, false), 4);
    EXPECT_EQ(r.mark_judged(4), (std::vector<int>{0}));
    const auto late = r.take_late(t0);
    ASSERT_EQ(late.size(), 5u);
    for (std::size_t i = 0; i < late.size(); ++i) {
        EXPECT_EQ(late[i].first, static_cast<std::int64_t>(i));
        EXPECT_EQ(late[i].second, (std::vector<int>{1}));
    }
    EXPECT_EQ(r.judged_ranks(4), (std::vector<int>{0, 1}));
    // Caught up: its next step is judged with the others, on time.
    r.observe(5, 0, 4, t0);
    r.observe(5, 1, 4, t0);
    ASSERT_EQ(r.ready(t0, false), 5);
    EXPECT_EQ(r.mark_judged(5), (std::vector<int>{0, 1}));
}

// An agent ships tensor by tensor: a rank can be judged with part of a step's rows. More rows of a judged rank at
// a judged step are reported again, once per growth.
TEST(StepReadiness, a_judged_rank_whose_rows_at_a_step_grow_is_reported_again) {
    StepReadiness r(milliseconds(1000));
    const auto t0 = Clock::now();
    r.observe(1, 0, 4, t0);
    r.observe(1, 1, 4, t0);
    r.mark_judged(1);
    r.observe(2, 0, 4, t0);
    r.observe(2, 1, 2, t0);  // half of rank 1's step 2
    ASSERT_EQ(r.ready(t0 + milliseconds(1000), false), 2);
    r.mark_judged(2);
    EXPECT_TRUE(r.take_late(t0 + milliseconds(1000)).empty());
    r.observe(2, 1, 4, t0 + milliseconds(1100));  // the rest
    r.observe(2, 1, 4, t0 + milliseconds(1200));
    auto late = r.take_late(t0 + milliseconds(1200));
    ASSERT_EQ(late.size(), 1u);
    EXPECT_EQ(late[0].first, 2);
    EXPECT_EQ(late[0].second, (std::vector<int>{1}));
    EXPECT_TRUE(r.take_late(t0 + milliseconds(5000)).empty());
}

TEST(StepReadiness, only_the_newest_judged_steps_are_kept_for_late_ranks) {
    StepReadiness r(milliseconds(0));
    const auto t0 = Clock::now();
    for (std::int64_t s = 0; s < 200; ++s) {
        r.observe(s, 0, 1, t0);
        ASSERT_EQ(r.ready(t0, false), s);
        r.mark_judged(s);
    }
    EXPECT_EQ(r.oldest_kept(), 200 - static_cast<std::int64_t>(StepReadiness::kLateWindow));
    r.observe(5, 1, 1, t0);  // far too old: dropped, not late and not judged
    EXPECT_TRUE(r.take_late(t0).empty());
    EXPECT_FALSE(r.ready(t0, true));
}

}  // namespace
}  // namespace msmon
