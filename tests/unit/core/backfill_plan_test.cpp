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

TEST(BackfillPlan, the_history_comes_block_by_block_across_folders_in_step_order_a_part_at_a_time_without_the_window) {
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
    // At most 70 at a time, never past the end of a part (one folder's block): r0's 64 steps of block 0 come whole
    // and end a part; then 40 of r1's, not ending it.
    bool part_done = false;
    Entries got = plan.take_history(70, &part_done);
    EXPECT_EQ(got, Entries(expected.begin(), expected.begin() + 64));
    EXPECT_TRUE(part_done);
    EXPECT_EQ(plan.progress().history_through, -1);  // r1's step 0 is the lowest not read
    Entries part = plan.take_history(40, &part_done);
    EXPECT_EQ(part, Entries(expected.begin() + 64, expected.begin() + 104));
    EXPECT_FALSE(part_done);
    EXPECT_EQ(plan.progress().history_through, 39);  // r1's step 40 is the lowest not read
    got.insert(got.end(), part.begin(), part.end());
    for (int parts = 0; !plan.done(); ++parts) {
        ASSERT_LT(parts, 10);
        part = plan.take_history(1000, &part_done);
        EXPECT_TRUE(part_done);
        ASSERT_FALSE(part.empty());
        for (const auto& e : part) {  // one folder's, of one block
            EXPECT_EQ(e.first, part.front().first);
            EXPECT_EQ(std::stoi(e.second.substr(2)) / 64, std::stoi(part.front().second.substr(2)) / 64);
        }
        got.insert(got.end(), part.begin(), part.end());
    }
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
