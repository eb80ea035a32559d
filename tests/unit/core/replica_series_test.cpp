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
