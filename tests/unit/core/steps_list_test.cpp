// Unit tests for core/steps_list: the --steps LIST grammar, merging, and membership.
#include "core/steps_list.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace msmon {
namespace {

using Ranges = std::vector<std::pair<std::int64_t, std::int64_t>>;

StepList parse_ok(const std::string& text) {
    std::string error;
    auto list = StepList::parse(text, error);
    EXPECT_TRUE(list.has_value()) << "'" << text << "' rejected: " << error;
    return list.value_or(StepList{});
}

TEST(StepList, single_steps_become_one_step_ranges) {
    const StepList s = parse_ok("12,20");
    EXPECT_EQ(s.ranges(), (Ranges{{12, 12}, {20, 20}}));
    EXPECT_EQ(s.min(), 12);
    EXPECT_EQ(s.max(), 20);
    EXPECT_TRUE(s.contains(12));
    EXPECT_TRUE(s.contains(20));
    EXPECT_FALSE(s.contains(13));
    EXPECT_FALSE(s.contains(11));
    EXPECT_FALSE(s.contains(21));
}

TEST(StepList, inclusive_range_contains_both_ends) {
    const StepList s = parse_ok("0-99");
    EXPECT_EQ(s.ranges(), (Ranges{{0, 99}}));
    EXPECT_TRUE(s.contains(0));
    EXPECT_TRUE(s.contains(50));
    EXPECT_TRUE(s.contains(99));
    EXPECT_FALSE(s.contains(100));
    EXPECT_FALSE(s.contains(-1));
}

TEST(StepList, mixes_steps_and_ranges) {
    const StepList s = parse_ok("5,10-20");
    EXPECT_EQ(s.ranges(), (Ranges{{5, 5}, {10, 20}}));
    EXPECT_TRUE(s.contains(5));
    EXPECT_FALSE(s.contains(6));
    EXPECT_FALSE(s.contains(9));
    EXPECT_TRUE(s.contains(10));
    EXPECT_TRUE(s.contains(20));
    EXPECT_FALSE(s.contains(21));
}

TEST(StepList, accepts_msprobe_bracketed_spelling) {
    EXPECT_EQ(parse_ok("[12, 20]").ranges(), (Ranges{{12, 12}, {20, 20}}));
    EXPECT_EQ(parse_ok("[0]").ranges(), (Ranges{{0, 0}}));
}

TEST(StepList, sorts_and_merges_overlapping_and_adjacent_ranges) {
    EXPECT_EQ(parse_ok("30,10-20,15-25").ranges(), (Ranges{{10, 25}, {30, 30}}));
    EXPECT_EQ(parse_ok("1-3,4-6,8").ranges(), (Ranges{{1, 6}, {8, 8}}));
    EXPECT_EQ(parse_ok("7,7,7").ranges(), (Ranges{{7, 7}}));
    EXPECT_EQ(parse_ok("0-100,5-10,50").ranges(), (Ranges{{0, 100}}));
}

TEST(StepList, contains_agrees_with_a_brute_force_set) {
    const StepList s = parse_ok("3,8-12,40-41,11-15,60,100-100");
    std::vector<bool> expected(120, false);
    for (int v : {3, 40, 41, 60, 100}) expected[static_cast<std::size_t>(v)] = true;
    for (int v = 8; v <= 15; ++v) expected[static_cast<std::size_t>(v)] = true;
    for (int v = 0; v < 120; ++v) EXPECT_EQ(s.contains(v), expected[static_cast<std::size_t>(v)]) << v;
}

TEST(StepList, rejects_text_that_is_not_a_step_list) {
    for (const char* bad : {"a", "5-3", "", "-1", "[]", " ", "5,", ",5", "5,,6", "1-2-3", "1-", "-", "1.5", "3-x",
                            "99999999999999999999"}) {
        std::string error;
        EXPECT_FALSE(StepList::parse(bad, error).has_value()) << "accepted '" << bad << "'";
        EXPECT_FALSE(error.empty()) << "no error for '" << bad << "'";
    }
}

TEST(StepList, rejects_a_space_inside_a_number) {
    // Spaces are dropped for "[12, 20]"; they must not glue "1 0" into step 10.
    std::string error;
    EXPECT_FALSE(StepList::parse("1 0", error).has_value());
}

TEST(StepList, range_ending_at_the_largest_step_still_merges) {
    const std::int64_t top = std::numeric_limits<std::int64_t>::max();
    const StepList s = parse_ok("0-" + std::to_string(top) + ",5");
    EXPECT_EQ(s.ranges(), (Ranges{{0, top}}));
    EXPECT_TRUE(s.contains(7));
    EXPECT_TRUE(s.contains(top));
}

}  // namespace
}  // namespace msmon
