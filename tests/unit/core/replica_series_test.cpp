// Replica groups learned from agreeing copies: what counts as evidence, when a group is learned, a copy that
// departs (once), a tie, shards that never group, a restarted rank, and a rank that rejoins.
#include "core/detect/replica_series.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

namespace msmon {
namespace {

// min, max, norm, mean, nans, zeros
constexpr int kMin = 0, kMax = 1, kCount = 6;

constexpr int kNorm = 2;
std::uint64_t digest_of(std::vector<double> v) {
    return replica_digest(v.data(), kCount, {kMin, kMax, kNorm});
}

// A copy whose statistics are `norm`-shaped: different norms print different rows.
ReplicaCopy copy(int rank, double norm, std::int64_t run = 1) {
    return {rank, run, 7, digest_of({-norm / 10, norm / 9, norm, norm / 1000, 0, 0}), norm, 0};
}

std::vector<ReplicaFinding> judge(ReplicaSeries& s, const std::map<int, double>& norms, std::int64_t run = 1) {
    std::vector<ReplicaCopy> copies;
    for (const auto& [rank, norm] : norms) copies.push_back(copy(rank, norm, run));
    return s.judge(copies);
}

TEST(ReplicaDigest, zeros_constants_and_non_finite_values_carry_no_evidence) {
    EXPECT_EQ(digest_of({0, 0, 0, 0, 0, 0}), kNoEvidence);
    EXPECT_EQ(digest_of({1, 1, 4, 1, 0, 0}), kNoEvidence) << "a tensor of ones prints the same on every shard";
    EXPECT_EQ(digest_of({-1, 1, NAN, 0, 1, 0}), kNoEvidence);
    EXPECT_NE(digest_of({-1, 1, 4, 0.5, 0, 0}), kNoEvidence);
    EXPECT_EQ(digest_of({-1, 1, 4, 0.0, 0, 0}), digest_of({-1, 1, 4, -0.0, 0, 0}));
    EXPECT_NE(digest_of({-1, 1, 4, 0.5, 0, 0}), digest_of({-1, 1, 4, 0.500001, 0, 0}));
    const double norm_only = 2.5;
    EXPECT_NE(replica_digest(&norm_only, 1, {-1, -1, 0}), kNoEvidence) << "without min and max, a norm is evidence";
    EXPECT_EQ(digest_of({0.0, 1e-06, 1.1e-05, 0.0, 0, 0}), kNoEvidence)
        << "a norm of 2 significant digits, as an Adam second moment prints: shards print it alike";
    EXPECT_NE(digest_of({-0.0001, 0.0002, 0.001234, 0.0, 0, 0}), kNoEvidence);
}

TEST(ReplicaSeries, ranks_that_agree_for_three_steps_are_replicas_and_a_departing_copy_is_found_once) {
    ReplicaSeries s;
    for (int step = 0; step < kReplicaLearnSteps; ++step) {
        EXPECT_TRUE(judge(s, {{0, 1.0 + step}, {1, 1.0 + step}, {2, 1.0 + step}, {3, 1.0 + step}}).empty());
    }
    EXPECT_EQ(s.replicas_of(2), 4);
    EXPECT_EQ(s.groups(), 1);
    const auto found = judge(s, {{0, 5.0}, {1, 5.0}, {2, 5.0}, {3, 7.5}});
    ASSERT_EQ(found.size(), 1u);
    EXPECT_FALSE(found[0].tie);
    EXPECT_EQ(found[0].rank, 3);
    EXPECT_EQ(found[0].value, 7.5);
    EXPECT_EQ(found[0].group_value, 5.0);
    EXPECT_EQ(found[0].others, (std::vector<int>{0, 1, 2}));
    // Still different: not found again.
    EXPECT_TRUE(judge(s, {{0, 6.0}, {1, 6.0}, {2, 6.0}, {3, 6.6}}).empty());
}

// The job-level judge: a rank whose copies came after their steps were judged (its node's agent started late) is
// judged then, against every copy, in step order; the others' state does not move.
TEST(ReplicaSeries, a_late_rank_learns_and_departs_against_every_copy_and_leaves_the_others_state_alone) {
    ReplicaSeries s;
    const std::vector<int> late = {3};
    for (int step = 0; step < kReplicaLearnSteps; ++step)
        EXPECT_TRUE(judge(s, {{0, 1.0 + step}, {1, 1.0 + step}, {2, 1.0 + step}}).empty());
    EXPECT_EQ(s.replicas_of(0), 3);
    // Rank 3's steps 0-2, late: it learns the group; ranks 0-2 do not count those steps again.
    for (int step = 0; step < kReplicaLearnSteps; ++step) {
        auto copies = std::vector<ReplicaCopy>{copy(0, 1.0 + step), copy(1, 1.0 + step), copy(2, 1.0 + step),
                                               copy(3, 1.0 + step)};
        EXPECT_TRUE(s.judge(copies, &late).empty());
    }
    EXPECT_EQ(s.replicas_of(3), 4);
    // Step 3, late for rank 3, which departs: found for rank 3 only.
    auto copies = std::vector<ReplicaCopy>{copy(0, 5.0), copy(1, 5.0), copy(2, 5.0), copy(3, 7.5)};
    const auto found = s.judge(copies, &late);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].rank, 3);
    EXPECT_EQ(found[0].others, (std::vector<int>{0, 1, 2}));
    // Late copies of rank 0 that agree: nothing, and rank 3 (not among them) stays departed: not found again on time.
    const std::vector<int> zero = {0};
    copies = {copy(0, 6.0), copy(1, 6.0), copy(2, 6.0), copy(3, 6.6)};
    EXPECT_TRUE(s.judge(copies, &zero).empty());
    EXPECT_TRUE(judge(s, {{0, 7.0}, {1, 7.0}, {2, 7.0}, {3, 7.7}}).empty());
}

// A late rank already judged at later steps (its old steps came after its newer ones): its old copies are compared
// but teach nothing, so a rank that left its group (a corrupted replica that became a group of its own) is not
// put back in it by steps from before the corruption.
TEST(ReplicaSeries, old_late_copies_of_a_rank_judged_since_do_not_teach_it_its_old_group_again) {
    ReplicaSeries s;
    // Steps 0-2 of ranks 0 and 2 and steps 10-15 of all three, judged as they came (with their steps).
    const auto judge_at = [&](std::int64_t step, const std::map<int, double>& norms) {
        std::vector<ReplicaCopy> copies;
        for (const auto& [rank, norm] : norms) copies.push_back(copy(rank, norm));
        return s.judge(copies, nullptr, step);
    };
    for (int step = 0; step < kReplicaLearnSteps; ++step)
        EXPECT_TRUE(judge_at(step, {{0, 1.0 + step}, {2, 1.0 + step}}).empty());
    for (int step = 10; step < 10 + kReplicaLearnSteps; ++step)
        EXPECT_TRUE(judge_at(step, {{0, 1.0 + step}, {1, 1.0 + step}, {2, 1.0 + step}}).empty());
    EXPECT_EQ(judge_at(13, {{0, 5.0}, {1, 7.0}, {2, 5.0}}).size(), 1u);  // rank 1 departs
    for (int step = 14; step < 14 + kReplicaLearnSteps; ++step)
        EXPECT_TRUE(judge_at(step, {{0, 6.0 + step}, {1, 8.0 + step}, {2, 6.0 + step}}).empty());
    EXPECT_EQ(s.replicas_of(1), 1) << "rank 1 is a group of its own";
    // Rank 1's copies of steps 0-2 come now, late, where it agreed with the others: older than its step 16.
    const std::vector<int> late = {1};
    for (int step = 0; step < kReplicaLearnSteps; ++step) {
        auto copies = std::vector<ReplicaCopy>{copy(0, 1.0 + step), copy(1, 1.0 + step), copy(2, 1.0 + step)};
        EXPECT_TRUE(s.judge(copies, &late, step).empty());
    }
    EXPECT_EQ(s.replicas_of(1), 1) << "old steps taught rank 1 its old group again";
    EXPECT_TRUE(judge_at(20, {{0, 9.0}, {1, 11.0}}).empty()) << "ranks 0 and 1 would be a tie";
}

// The job-level judge judges a step once most ranks wrote it: a tie among those, with replicas still to come, is
// held, and the late copies tell which copy changed (the sdc-weight run with node a's agent first: ranks 0 and 1
// on time, rank 1 altered, ranks 2 and 3 late).
class HeldTies : public ::testing::Test {
protected:
    static constexpr std::int64_t kHold = 64;
    std::vector<ReplicaFinding> at(std::int64_t step, const std::map<int, double>& norms,
                                   const std::vector<int>* only = nullptr) {
        std::vector<ReplicaCopy> copies;
        for (const auto& [rank, norm] : norms) copies.push_back(copy(rank, norm));
        return s.judge(copies, only, step, kHold);
    }
    void learn_four() {
        for (int step = 0; step < kReplicaLearnSteps; ++step)
            ASSERT_TRUE(at(step, {{0, 1.0 + step}, {1, 1.0 + step}, {2, 1.0 + step}, {3, 1.0 + step}}).empty());
        ASSERT_EQ(s.replicas_of(0), 4);
    }
    ReplicaSeries s;
    const std::vector<int> late = {2, 3};
};

TEST_F(HeldTies, a_tie_on_time_is_held_and_the_late_copies_name_the_copy_that_changed) {
    learn_four();
    EXPECT_TRUE(at(31, {{0, 5.0}, {1, 5.5}}).empty()) << "ranks 2 and 3 can break the tie";
    EXPECT_TRUE(s.holds());
    for (std::int64_t step = 32; step < 40; ++step)
        EXPECT_TRUE(at(step, {{0, 1.0 * step}, {1, 1.5 * step}}).empty()) << "held at step " << step << " too";
    const auto found = at(31, {{0, 5.0}, {1, 5.5}, {2, 5.0}, {3, 5.0}}, &late);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_FALSE(found[0].tie);
    EXPECT_EQ(found[0].rank, 1) << "an on-time rank, named once its replicas came";
    EXPECT_EQ(found[0].value, 5.5);
    EXPECT_EQ(found[0].others, (std::vector<int>{0, 2, 3}));
    for (std::int64_t step = 32; step < 40; ++step)
        EXPECT_TRUE(at(step, {{0, 1.0 * step}, {1, 1.5 * step}, {2, 1.0 * step}, {3, 1.0 * step}}, &late).empty())
            << "found once: step " << step;
    EXPECT_FALSE(s.holds());
    EXPECT_TRUE(at(40, {{0, 40.0}, {1, 60.0}, {2, 40.0}, {3, 40.0}}).empty()) << "rank 1 stays departed";
}

TEST_F(HeldTies, one_late_copy_breaks_a_held_tie_while_another_replica_is_still_to_come) {
    learn_four();
    EXPECT_TRUE(at(31, {{0, 5.0}, {1, 5.5}}).empty());
    const std::vector<int> two = {2};
    const auto found = at(31, {{0, 5.0}, {1, 5.5}, {2, 5.0}}, &two);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].rank, 1);
    EXPECT_EQ(found[0].others, (std::vector<int>{0, 2}));
    EXPECT_FALSE(s.holds());
    const std::vector<int> three = {3};
    EXPECT_TRUE(at(31, {{0, 5.0}, {1, 5.5}, {2, 5.0}, {3, 5.0}}, &three).empty()) << "found once";
}

TEST_F(HeldTies, a_two_against_two_tie_once_every_replica_came_is_reported_for_both_sides) {
    learn_four();
    EXPECT_TRUE(at(31, {{0, 5.0}, {1, 5.5}}).empty());
    const auto found = at(31, {{0, 5.0}, {1, 5.5}, {2, 5.0}, {3, 5.5}}, &late);
    ASSERT_EQ(found.size(), 2u);
    EXPECT_TRUE(found[0].tie && found[1].tie);
    EXPECT_EQ(found[0].side, (std::vector<int>{0, 2}));
    EXPECT_EQ(found[1].side, (std::vector<int>{1, 3}));
    EXPECT_FALSE(s.holds());
}

TEST_F(HeldTies, a_held_tie_no_late_copy_came_to_is_reported_with_its_step_when_the_window_passes_or_on_release) {
    learn_four();
    EXPECT_TRUE(at(31, {{0, 5.0}, {1, 5.5}}).empty());
    for (std::int64_t step = 32; step < 31 + kHold; ++step)
        EXPECT_TRUE(at(step, {{0, 1.0 * step}, {1, 1.0 * step}}).empty()) << step;
    const auto found = at(31 + kHold, {{0, 9.0}, {1, 9.0}});
    ASSERT_EQ(found.size(), 2u) << "both sides, as they stood";
    for (const auto& f : found) {
        EXPECT_TRUE(f.tie);
        EXPECT_EQ(f.step, 31);
    }
    EXPECT_EQ(found[0].value, 5.0);
    EXPECT_EQ(found[0].group_value, 5.5);
    EXPECT_FALSE(s.holds());
    // Another tie, then nothing more will come: release() reports it.
    EXPECT_TRUE(at(200, {{0, 3.0}, {1, 3.5}}).empty());
    const auto released = s.release();
    ASSERT_EQ(released.size(), 2u);
    EXPECT_EQ(released[0].step, 200);
    EXPECT_FALSE(s.holds());
}

// Node b's agent started after step 31 was judged: ranks 2 and 3 were never seen, so nothing says replicas are
// missing and the tie is reported. Their late copies learn the group in step order and, at step 31, name rank 1.
TEST_F(HeldTies, replicas_never_seen_when_a_tie_was_reported_name_the_changed_copy_when_they_come) {
    for (int step = 0; step < kReplicaLearnSteps; ++step)
        ASSERT_TRUE(at(step, {{0, 1.0 + step}, {1, 1.0 + step}}).empty());
    ASSERT_EQ(at(31, {{0, 5.0}, {1, 5.5}}).size(), 2u) << "a 1-1 tie, reported";
    // Ranks 0 and 1 go on apart (each learned as a group of its own after 3 steps) before the late copies come.
    for (std::int64_t step = 32; step < 40; ++step) EXPECT_TRUE(at(step, {{0, 1.0 * step}, {1, 1.5 * step}}).empty());
    for (int step = 0; step < kReplicaLearnSteps; ++step)
        EXPECT_TRUE(at(step, {{0, 1.0 + step}, {1, 1.0 + step}, {2, 1.0 + step}, {3, 1.0 + step}}, &late).empty());
    const auto found = at(31, {{0, 5.0}, {1, 5.5}, {2, 5.0}, {3, 5.0}}, &late);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_FALSE(found[0].tie);
    EXPECT_EQ(found[0].rank, 1);
    EXPECT_EQ(found[0].others, (std::vector<int>{0, 2, 3}));
    for (std::int64_t step = 32; step < 40; ++step)
        EXPECT_TRUE(at(step, {{0, 1.0 * step}, {1, 1.5 * step}, {2, 1.0 * step}, {3, 1.0 * step}}, &late).empty())
            << "found once: step " << step;
    EXPECT_TRUE(at(40, {{0, 40.0}, {1, 60.0}, {2, 40.0}, {3, 40.0}}).empty());
}

TEST_F(HeldTies, with_every_replica_on_time_a_tie_is_reported_at_once) {
    for (int step = 0; step < kReplicaLearnSteps; ++step)
        ASSERT_TRUE(at(step, {{0, 1.0 + step}, {1, 1.0 + step}}).empty());
    const auto found = at(5, {{0, 5.0}, {1, 5.5}});
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0].step, kReplicaNoStep) << "reported at the step judged";
    EXPECT_FALSE(s.holds());
}

TEST(ReplicaSeries, a_copy_that_agrees_again_is_judged_again) {
    ReplicaSeries s;
    for (int step = 0; step < kReplicaLearnSteps; ++step) judge(s, {{0, 1.0 + step}, {1, 1.0 + step}, {2, 1.0 + step}});
    ASSERT_EQ(judge(s, {{0, 5.0}, {1, 5.0}, {2, 9.0}}).size(), 1u);
    EXPECT_TRUE(judge(s, {{0, 6.0}, {1, 6.0}, {2, 6.0}}).empty()) << "a reduced gradient agrees again next step";
    const auto again = judge(s, {{0, 7.0}, {1, 7.0}, {2, 8.0}});
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0].rank, 2);
}

TEST(ReplicaSeries, a_copy_that_stays_apart_becomes_a_group_of_its_own_and_is_not_found_again) {
    ReplicaSeries s;
    for (int step = 0; step < kReplicaLearnSteps; ++step) judge(s, {{0, 1.0 + step}, {1, 1.0 + step}, {2, 1.0 + step}});
    ASSERT_EQ(judge(s, {{0, 5.0}, {1, 5.0}, {2, 9.0}}).size(), 1u);
    for (int step = 0; step < 10; ++step)
        EXPECT_TRUE(judge(s, {{0, 6.0 + step}, {1, 6.0 + step}, {2, 16.0 + step}}).empty()) << step;
    EXPECT_EQ(s.replicas_of(2), 1);
    EXPECT_EQ(s.replicas_of(0), 2);
}

TEST(ReplicaSeries, two_replicas_that_disagree_are_a_tie_naming_both_sides) {
    ReplicaSeries s;
    for (int step = 0; step < kReplicaLearnSteps; ++step) judge(s, {{0, 1.0 + step}, {1, 1.0 + step}});
    const auto found = judge(s, {{0, 2.462905}, {1, 2.487534}});
    ASSERT_EQ(found.size(), 2u);
    for (const auto& f : found) EXPECT_TRUE(f.tie);
    EXPECT_EQ(found[0].side, (std::vector<int>{0}));
    EXPECT_EQ(found[0].others, (std::vector<int>{1}));
    EXPECT_EQ(found[0].value, 2.462905);
    EXPECT_EQ(found[0].group_value, 2.487534);
    EXPECT_EQ(found[1].side, (std::vector<int>{1}));
    EXPECT_EQ(found[1].others, (std::vector<int>{0}));
    EXPECT_TRUE(judge(s, {{0, 3.0}, {1, 3.1}}).empty()) << "once";
}

TEST(ReplicaSeries, shards_that_never_agree_form_no_group_and_are_never_found) {
    // 2 data-parallel replicas x 2 tensor-parallel shards: ranks 0 and 2 hold one shard, 1 and 3 the other.
    ReplicaSeries s;
    for (int step = 0; step < 20; ++step) {
        const double a = 1.0 + step, b = 100.0 + step * 3;
        EXPECT_TRUE(judge(s, {{0, a}, {1, b}, {2, a}, {3, b}}).empty());
    }
    EXPECT_EQ(s.groups(), 2);
    EXPECT_EQ(s.replicas_of(0), 2);
    EXPECT_EQ(s.replicas_of(1), 2);
    // Shard 1's replica 3 departs: found against rank 1 only.
    const auto found = judge(s, {{0, 30.0}, {1, 300.0}, {2, 30.0}, {3, 301.0}});
    ASSERT_EQ(found.size(), 2u) << "two replicas: a tie";
    EXPECT_EQ(found[0].side, (std::vector<int>{1}));
    EXPECT_EQ(found[1].side, (std::vector<int>{3}));
}

TEST(ReplicaSeries, nothing_is_judged_before_a_group_is_learned_nor_from_copies_without_evidence) {
    ReplicaSeries s;
    judge(s, {{0, 1.0}, {1, 1.0}, {2, 1.0}});
    EXPECT_TRUE(judge(s, {{0, 2.0}, {1, 2.0}, {2, 9.0}}).empty()) << "not learned yet";
    EXPECT_EQ(s.groups(), 0);
    for (int step = 0; step < kReplicaLearnSteps; ++step) judge(s, {{0, 3.0 + step}, {1, 3.0 + step}, {2, 3.0 + step}});
    std::vector<ReplicaCopy> copies = {copy(0, 9.0), copy(1, 9.0), copy(2, 9.0)};
    copies[2].digest = kNoEvidence;  // printed all zeros: says nothing
    EXPECT_TRUE(s.judge(copies).empty());
}

TEST(ReplicaSeries, a_restarted_rank_learns_again_within_its_new_run) {
    ReplicaSeries s;
    for (int step = 0; step < kReplicaLearnSteps; ++step) judge(s, {{0, 1.0 + step}, {1, 1.0 + step}, {2, 1.0 + step}});
    ASSERT_EQ(s.replicas_of(2), 3);
    // Rank 2 restarts (a new run folder) from another checkpoint: its values differ, and nothing is claimed.
    std::vector<ReplicaCopy> copies = {copy(0, 5.0), copy(1, 5.0), copy(2, 4.0, 2)};
    EXPECT_TRUE(s.judge(copies).empty());
    EXPECT_EQ(s.replicas_of(2), 1);
    EXPECT_EQ(s.replicas_of(0), 2);
}

TEST(ReplicaSeries, copies_of_other_ops_are_not_compared) {
    ReplicaSeries s;
    for (int step = 0; step < kReplicaLearnSteps; ++step) judge(s, {{0, 1.0 + step}, {1, 1.0 + step}, {2, 1.0 + step}});
    std::vector<ReplicaCopy> copies = {copy(0, 5.0), copy(1, 5.0), copy(2, 5.0)};
    copies[2].layout = 8;  // rank 2 now prints other ops
    copies[2].digest ^= 1;
    EXPECT_TRUE(s.judge(copies).empty());
}

}  // namespace
}  // namespace msmon
