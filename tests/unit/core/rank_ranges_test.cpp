// Ranks as ranges ("0-3,5"), written and read back (core/text/rank_ranges.hpp).
#include "core/text/rank_ranges.hpp"

#include <gtest/gtest.h>

namespace msmon {
namespace {

TEST(RankRanges, ranges_read_back_as_the_ranks_they_name) {
    for (const std::vector<int>& ranks :
         std::vector<std::vector<int>>{{}, {0}, {0, 1, 2, 3}, {0, 2, 3, 7}, {5, 1023}}) {
        const auto back = parse_rank_ranges(rank_ranges(ranks));
        ASSERT_TRUE(back) << rank_ranges(ranks);
        EXPECT_EQ(*back, ranks) << rank_ranges(ranks);
    }
    EXPECT_EQ(rank_ranges({0, 2, 3, 7}), "0,2-3,7");
}

TEST(RankRanges, what_is_not_ranges_is_refused) {
    for (const char* bad : {"a", "1-", "-1", "3-1", "1,1", "2,1", "1,", ",1", "1 ,2", "0-99999999", "0-2000000"})
        EXPECT_FALSE(parse_rank_ranges(bad)) << bad;
}

}  // namespace
}  // namespace msmon
