// Unit tests for core/sim/fault_plan: the simulator's --faults grammar TYPE@STEP[:rRANK][:mMODULE][xFACTOR].
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
    for (const char* bad : {"boom@1", "nan", "nan@x", "nan@", "spike@-1", "nan@1.5", "NAN@1", "spike@12,boom@3",
                            "spike@12,,nan@3", "@5"}) {
        std::string error;
        EXPECT_FALSE(parse_fault_list(bad, error).has_value()) << "accepted '" << bad << "'";
        EXPECT_FALSE(error.empty()) << "no error for '" << bad << "'";
    }
}

TEST(FaultPlan, rejects_bad_ranks_and_factors) {
    for (const char* bad : {"nan@5:r", "nan@5:", "nan@5:r-1", "nan@5:rx", "spike@5x0", "spike@5x-2", "spike@5x",
                            "spike@5xabc", "spike@5xnan"}) {
        std::string error;
        EXPECT_FALSE(parse_fault_list(bad, error).has_value()) << "accepted '" << bad << "'";
        EXPECT_FALSE(error.empty()) << "no error for '" << bad << "'";
    }
}

TEST(FaultPlan, nan_takes_a_module_and_keeps_its_old_forms) {
    const auto f =
        parse_ok("nan@11:r3:mlayers.1.mlp.linear_fc2,nan@20:r3,nan@7,nan@5:mmodule.module.decoder.final_layernorm");
    ASSERT_EQ(f.size(), 4u);
    EXPECT_EQ(f[0].type, Fault::Type::nan);
    EXPECT_EQ(f[0].step, 11);
    EXPECT_EQ(f[0].rank, 3);
    EXPECT_EQ(f[0].module, "layers.1.mlp.linear_fc2");
    EXPECT_EQ(f[1].module, "") << "no module: the simulator's default, mid-network";
    EXPECT_EQ(f[1].rank, 3);
    EXPECT_EQ(f[2].rank, -1);
    EXPECT_EQ(f[3].module, "module.module.decoder.final_layernorm");
    EXPECT_EQ(f[3].rank, -1);
}

TEST(FaultPlan, each_new_type_has_its_default_factor) {
    const auto f = parse_ok(
        "baddata@44:r0,baddata@9:r2x5,drift@30,drift@30:mlayers.0.mlp.linear_fc1x4,stall@12:r5,"
        "restart@45,spike@3:r1x20");
    ASSERT_EQ(f.size(), 7u);
    EXPECT_EQ(f[0].type, Fault::Type::baddata);
    EXPECT_EQ(f[0].rank, 0);
    EXPECT_EQ(f[0].factor, 25.0);
    EXPECT_EQ(f[1].factor, 5.0);
    EXPECT_EQ(f[2].type, Fault::Type::drift);
    EXPECT_EQ(f[2].factor, 10.0);
    EXPECT_EQ(f[2].rank, -1);
    EXPECT_EQ(f[3].module, "layers.0.mlp.linear_fc1") << "a factor written right after the module is split off";
    EXPECT_EQ(f[3].factor, 4.0);
    EXPECT_EQ(f[4].type, Fault::Type::stall);
    EXPECT_EQ(f[4].step, 12);
    EXPECT_EQ(f[4].rank, 5);
    EXPECT_EQ(f[5].type, Fault::Type::restart);
    EXPECT_EQ(f[5].step, 45);
    EXPECT_EQ(f[6].type, Fault::Type::spike);
    EXPECT_EQ(f[6].rank, 1);
    EXPECT_EQ(f[6].factor, 20.0);
}

TEST(FaultPlan, a_module_name_with_an_x_in_it_stays_whole) {
    const auto f = parse_ok("drift@3:mdecoder.layers.0.mlp.experts.local_experts.1x2.5,nan@4:mlayers.0.mlp.experts");
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[0].module, "decoder.layers.0.mlp.experts.local_experts.1");
    EXPECT_EQ(f[0].factor, 2.5);
    EXPECT_EQ(f[1].module, "layers.0.mlp.experts");
}

TEST(FaultPlan, rejects_what_a_type_does_not_take_or_lacks) {
    for (const char* bad : {"baddata@4", "stall@4", "restart@4:r1", "drift@4:r1", "spike@4:mlayers.0", "stall@4:r1x3",
                            "restart@4x2", "nan@4x2", "nan@4:m", "nan@4:q3", "baddata@4:r1x0"}) {
        std::string error;
        EXPECT_FALSE(parse_fault_list(bad, error).has_value()) << "accepted '" << bad << "'";
        EXPECT_FALSE(error.empty()) << "no error for '" << bad << "'";
    }
}

}  // namespace
}  // namespace msmon
