// Unit tests for core/sim/fault_plan: the simulator's --faults grammar TYPE@STEP[:rRANK][xFACTOR].
#include "core/sim/fault_plan.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace msmon {
namespace {

std::vector<Fault> parse_ok(const std::string& text) {
    std::string error;
    auto faults = parse_fault_list(text, error);
    EXPECT_TRUE(faults.has_value()) << "'" << text << "' rejected: " << error;
    return faults.value_or(std::vector<Fault>{});
}

TEST(FaultPlan, parses_a_list_of_faults_on_every_rank) {
    const auto f = parse_ok("spike@12,nan@20");
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[0].type, Fault::Type::spike);
    EXPECT_EQ(f[0].step, 12);
    EXPECT_EQ(f[0].rank, -1);
    EXPECT_EQ(f[0].factor, 100.0);
    EXPECT_EQ(f[1].type, Fault::Type::nan);
    EXPECT_EQ(f[1].step, 20);
    EXPECT_EQ(f[1].rank, -1);
}

TEST(FaultPlan, rank_suffix_limits_a_fault_to_one_rank) {
    const auto f = parse_ok("nan@20:r3");
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].type, Fault::Type::nan);
    EXPECT_EQ(f[0].step, 20);
    EXPECT_EQ(f[0].rank, 3);
}

TEST(FaultPlan, rank_and_factor_together) {
    const auto f = parse_ok("spike@40:r0x50");
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].type, Fault::Type::spike);
    EXPECT_EQ(f[0].step, 40);
    EXPECT_EQ(f[0].rank, 0);
    EXPECT_EQ(f[0].factor, 50.0);
}

TEST(FaultPlan, factor_without_rank_may_be_fractional) {
    const auto f = parse_ok("spike@7x2.5");
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].step, 7);
    EXPECT_EQ(f[0].rank, -1);
    EXPECT_EQ(f[0].factor, 2.5);
}

TEST(FaultPlan, empty_list_means_no_faults) {
    EXPECT_TRUE(parse_ok("").empty());
}

TEST(FaultPlan, rejects_unknown_types_and_missing_or_bad_steps) {
    for (const char* bad : {"boom@1", "nan", "nan@x", "nan@", "spike@-1", "nan@1.5", "NAN@1",
                            "spike@12,boom@3", "spike@12,,nan@3", "@5"}) {
        std::string error;
        EXPECT_FALSE(parse_fault_list(bad, error).has_value()) << "accepted '" << bad << "'";
        EXPECT_FALSE(error.empty()) << "no error for '" << bad << "'";
    }
}

TEST(FaultPlan, rejects_bad_ranks_and_factors) {
    for (const char* bad : {"nan@5:r", "nan@5:", "nan@5:r-1", "nan@5:rx", "spike@5x0", "spike@5x-2",
                            "spike@5x", "spike@5xabc", "spike@5xnan"}) {
        std::string error;
        EXPECT_FALSE(parse_fault_list(bad, error).has_value()) << "accepted '" << bad << "'";
        EXPECT_FALSE(error.empty()) << "no error for '" << bad << "'";
    }
}

}  // namespace
}  // namespace msmon
