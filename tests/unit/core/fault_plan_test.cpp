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

TEST(FaultPlan, sdc_and_sdcgrad_need_a_rank_and_take_a_weight_and_a_factor) {
    const auto f = parse_ok(
        "sdc@31:r1,sdc@40:r2:mlayers.0.mlp.linear_fc2.weightx1.05,sdcgrad@22:r3,sdcgrad@5:r0x2:mlayers.1.mlp.linear_"
        "fc1");
    ASSERT_EQ(f.size(), 4u);
    EXPECT_EQ(f[0].type, Fault::Type::sdc);
    EXPECT_EQ(f[0].step, 31);
    EXPECT_EQ(f[0].rank, 1);
    EXPECT_EQ(f[0].factor, 1.01) << "a weight x1.01 by default";
    EXPECT_EQ(f[0].module, "") << "no weight: the simulator's default, mid-network";
    EXPECT_EQ(f[1].module, "layers.0.mlp.linear_fc2.weight") << "a factor right after the weight is split off";
    EXPECT_EQ(f[1].factor, 1.05);
    EXPECT_EQ(f[2].type, Fault::Type::sdcgrad);
    EXPECT_EQ(f[2].rank, 3);
    EXPECT_EQ(f[2].factor, 1.5) << "a reduced gradient x1.5 by default";
    EXPECT_EQ(f[3].rank, 0);
    EXPECT_EQ(f[3].factor, 2.0);
    EXPECT_EQ(f[3].module, "layers.1.mlp.linear_fc1");
    EXPECT_EQ(fault_type_name(Fault::Type::sdc), "sdc");
    EXPECT_EQ(fault_type_name(Fault::Type::sdcgrad), "sdcgrad");
}

TEST(FaultPlan, lr_acts_on_every_rank_with_a_factor_and_dead_on_every_rank_with_a_module) {
    const auto f = parse_ok("lr@35,lr@10x0.5,dead@18,dead@20:mlayers.1.mlp.linear_fc1");
    ASSERT_EQ(f.size(), 4u);
    EXPECT_EQ(f[0].type, Fault::Type::lr);
    EXPECT_EQ(f[0].step, 35);
    EXPECT_EQ(f[0].rank, -1);
    EXPECT_EQ(f[0].factor, 20.0) << "the learning rate x20 by default";
    EXPECT_EQ(f[1].factor, 0.5) << "a smaller learning rate is a factor too";
    EXPECT_EQ(f[2].type, Fault::Type::dead);
    EXPECT_EQ(f[2].step, 18);
    EXPECT_EQ(f[2].rank, -1);
    EXPECT_EQ(f[2].module, "");
    EXPECT_EQ(f[3].module, "layers.1.mlp.linear_fc1");
    EXPECT_EQ(fault_type_name(Fault::Type::lr), "lr");
    EXPECT_EQ(fault_type_name(Fault::Type::dead), "dead");
}

TEST(FaultPlan, rejects_what_the_new_types_do_not_take_or_lack) {
    for (const char* bad :
         {"sdc@4", "sdcgrad@4", "sdc@4:mlayers.0.mlp.linear_fc1", "sdc@4:r1x0", "sdcgrad@4:r1:m", "lr@4:r1",
          "lr@4:mlayers.0.mlp", "lr@4x", "dead@4:r1", "dead@4x2", "dead@4:m", "SDC@4:r1", "sdc4:r1"}) {
        std::string error;
        EXPECT_FALSE(parse_fault_list(bad, error).has_value()) << "accepted '" << bad << "'";
        EXPECT_FALSE(error.empty()) << "no error for '" << bad << "'";
    }
    std::string error;
    EXPECT_FALSE(parse_fault_list("sdc@4", error).has_value());
    EXPECT_NE(error.find("needs a rank"), std::string::npos) << error;
    EXPECT_FALSE(parse_fault_list("lr@4:r2", error).has_value());
    EXPECT_NE(error.find("every rank"), std::string::npos) << error;
    EXPECT_FALSE(parse_fault_list("boom@4", error).has_value());
    EXPECT_NE(error.find("sdcgrad"), std::string::npos) << "the list of faults names the new ones: " << error;
}

}  // namespace
}  // namespace msmon
