// Unit tests for core/ingest/backfill_plan: a backlog's reading order (newest of every folder first, the other
// files, then the history in one ascending order across folders) and the progress the screen shows.
#include "core/ingest/backfill_plan.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace msmon {
namespace {

// A rank folder's CSVs of `kinds` for steps [0, steps), one per step, as msprobe names them, listed out of order.
std::vector<PlannedFile> rank_files(const std::vector<std::string>& kinds, int steps) {
    std::vector<PlannedFile> out;
    for (int s = steps - 1; s >= 0; --s)
        for (const auto& k : kinds)
            out.push_back({s, k + "_" + std::to_string(s) + "-" + std::to_string(s) + ".csv", true, k, s});
    return out;
}

using Entries = std::vector<BackfillPlan::Entry>;

TEST(BackfillPlan, the_window_is_each_folders_newest_file_of_each_kind) {
    BackfillPlan plan;
    plan.add_folder("r0", rank_files({"grad_reduced", "param_origin"}, 5));
    auto r1 = rank_files({"grad_reduced"}, 3);  // rank 1 is two steps behind
    plan.add_folder("r1", r1);
    EXPECT_EQ(
        plan.take_window(),
        (Entries{{"r0", "grad_reduced_4-4.csv"}, {"r0", "param_origin_4-4.csv"}, {"r1", "grad_reduced_2-2.csv"}}));
    const BackfillProgress p = plan.progress();
    EXPECT_TRUE(p.active);
    EXPECT_EQ(p.files, 13u);
    EXPECT_EQ(p.files_fed, 3u);
    EXPECT_EQ(p.first_step, 0);
    EXPECT_EQ(p.last_step, 4);
    EXPECT_EQ(p.history_through, -1);  // nothing older read yet
    EXPECT_EQ(p.folders, 2u);
}

TEST(BackfillPlan, the_history_comes_block_by_block_across_folders_in_step_order_without_the_window) {
    BackfillPlan plan;
    plan.add_folder("r0", rank_files({"a"}, 130));  // blocks 0 (steps 0-63), 1 (64-127), 2 (128-129)
    plan.add_folder("r1", rank_files({"a"}, 130));
    EXPECT_EQ(plan.take_window(), (Entries{{"r0", "a_129-129.csv"}, {"r1", "a_129-129.csv"}}));
    EXPECT_TRUE(plan.take_others().empty());
    Entries expected;
    for (int block = 0; block < 3; ++block)
        for (const std::string folder : {"r0", "r1"})
            for (int s = block * 64; s < std::min(block * 64 + 64, 129); ++s)
                expected.push_back({folder, "a_" + std::to_string(s) + "-" + std::to_string(s) + ".csv"});
    Entries got = plan.take_history(70);
    EXPECT_EQ(got, Entries(expected.begin(), expected.begin() + 70));
    EXPECT_EQ(plan.progress().history_through, 5);  // r1's step 6 is the lowest not read
    const Entries rest = plan.take_history(1000);
    got.insert(got.end(), rest.begin(), rest.end());
    EXPECT_EQ(got, expected);
    EXPECT_TRUE(plan.done());
    EXPECT_FALSE(plan.progress().active);
    EXPECT_EQ(plan.progress().history_through, 129);
    EXPECT_TRUE(plan.take_history(10).empty());
}

TEST(BackfillPlan, files_that_say_the_jobs_settings_come_first_among_the_others) {
    BackfillPlan plan;
    plan.add_folder("log/rank_0", {{0, "info.log", false, "", -1, false}});
    plan.add_folder("msrun_log", {{0, "worker_0.log", false, "", -1, true}});
    plan.add_folder("r0", rank_files({"a"}, 2));
    plan.take_window();
    EXPECT_EQ(plan.take_others(), (Entries{{"msrun_log", "worker_0.log"}, {"log/rank_0", "info.log"}}));
    EXPECT_EQ(plan.take_history(5), (Entries{{"r0", "a_0-0.csv"}}));
    EXPECT_TRUE(plan.done());
}

TEST(BackfillPlan, a_file_of_many_steps_is_ordered_by_its_first_and_the_range_ends_at_its_last) {
    BackfillPlan plan;
    plan.add_folder("r0", {{0, "a_0-99.csv", true, "a", 99},
                           {100, "a_100-199.csv", true, "a", 199},
                           {200, "a_200-250.csv", true, "a", 250}});
    EXPECT_EQ(plan.take_window(), (Entries{{"r0", "a_200-250.csv"}}));
    EXPECT_EQ(plan.progress().last_step, 250);
    EXPECT_EQ(plan.take_history(1), (Entries{{"r0", "a_0-99.csv"}}));
    EXPECT_EQ(plan.progress().history_through, 99);
}

}  // namespace
}  // namespace msmon
