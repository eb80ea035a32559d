// Unit tests for core/sim/sim_model and fault_schedule: the simulated GPT's tensors, its modules in forward order
// with the activations between them, where faults name modules, and when each fault acts.
#include "core/sim/sim_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "core/sim/fault_schedule.hpp"

namespace msmon {
namespace {

int module_index(const SimModel& m, const std::string& name) {
    for (std::size_t i = 0; i < m.modules().size(); ++i)
        if (m.modules()[i].name == name) return static_cast<int>(i);
    return -1;
}

TEST(SimModel, has_exactly_the_parameters_asked_for_with_megatron_names) {
    for (int n : {1, 2, 3, 5, 16, 30, 200}) {
        const SimModel m(n, 1);
        ASSERT_EQ(m.params().size(), static_cast<std::size_t>(n));
        EXPECT_EQ(m.params().front().name, "module.module.embedding.word_embeddings.weight");
        for (const auto& p : m.params()) {
            EXPECT_GE(p.module, 0) << p.name << " belongs to no module";
            EXPECT_GT(p.grad_norm, 0);
        }
    }
    const SimModel m(16, 1);
    EXPECT_EQ(m.layers(), 3);
    EXPECT_EQ(m.params()[14].name, "module.module.decoder.final_layernorm.weight");
    EXPECT_TRUE(m.params()[14].vector);
    EXPECT_EQ(m.params()[15].name, "module.module.output_layer.weight");
    EXPECT_EQ(m.params()[15].shape, "[25216, 1024]");
}

TEST(SimModel, modules_finish_in_forward_order_children_before_their_container) {
    const SimModel m(16, 1);
    const auto& mods = m.modules();
    ASSERT_FALSE(mods.empty());
    EXPECT_EQ(mods.front().name, "module.module.embedding.word_embeddings");
    EXPECT_EQ(mods.back().name, "") << "the root (rows .input/.output) finishes last";
    const std::string layer = "module.module.decoder.layers.1";
    const int ln = module_index(m, layer + ".input_layernorm"),
              qkv = module_index(m, layer + ".self_attention.linear_qkv"),
              proj = module_index(m, layer + ".self_attention.linear_proj"),
              attn = module_index(m, layer + ".self_attention"), fc1 = module_index(m, layer + ".mlp.linear_fc1"),
              fc2 = module_index(m, layer + ".mlp.linear_fc2"), mlp = module_index(m, layer + ".mlp"),
              whole = module_index(m, layer), next = module_index(m, "module.module.decoder.layers.2.input_layernorm");
    ASSERT_TRUE(ln >= 0 && qkv >= 0 && proj >= 0 && attn >= 0 && fc1 >= 0 && fc2 >= 0 && mlp >= 0 && whole >= 0);
    EXPECT_LT(ln, qkv);
    EXPECT_LT(qkv, proj);
    EXPECT_LT(proj, attn);
    EXPECT_LT(attn, fc1);
    EXPECT_LT(fc1, fc2);
    EXPECT_LT(fc2, mlp);
    EXPECT_LT(mlp, whole);
    EXPECT_LT(whole, next);
    // One tensor, several rows: a module's input is what the module before it produced.
    EXPECT_EQ(mods[qkv].input, mods[ln].output);
    EXPECT_EQ(mods[mlp].output, mods[fc2].output);
    EXPECT_EQ(mods[whole].output, mods[next].input);
    EXPECT_EQ(mods[static_cast<std::size_t>(module_index(m, "module.module.decoder.layers.0"))].input, mods[0].output)
        << "the embedding's output is the first layer's input";
    // The batch has no gradient: its rows are msprobe's all-nan placeholders in actv_grad.
    EXPECT_EQ(mods.front().input_grad, -1);
    EXPECT_EQ(m.values()[static_cast<std::size_t>(mods.front().input)].type, ActvType::data);
    // A LayerNorm's input gradient is its own path's, not the residual stream's.
    EXPECT_NE(mods[ln].input_grad, mods[whole].input_grad);
    EXPECT_TRUE(m.grads()[static_cast<std::size_t>(mods[ln].input_grad)].norm_input);
    EXPECT_EQ(SimModel::row_name(mods.back(), false), ".input");
    EXPECT_EQ(SimModel::row_name(mods[fc2], true), layer + ".mlp.linear_fc2.output");
}

TEST(SimModel, finds_a_module_by_full_name_tail_or_row_and_refuses_unknown_or_ambiguous_ones) {
    const SimModel m(16, 1);
    std::string error;
    const int fc2 = module_index(m, "module.module.decoder.layers.1.mlp.linear_fc2");
    EXPECT_EQ(m.find_module("module.module.decoder.layers.1.mlp.linear_fc2", error), fc2);
    EXPECT_EQ(m.find_module("layers.1.mlp.linear_fc2", error), fc2);
    EXPECT_EQ(m.find_module("layers.1.mlp.linear_fc2.output", error), fc2);
    EXPECT_EQ(m.find_module("module.module.decoder.layers.1.mlp.linear_fc2.weight", error), fc2);
    EXPECT_EQ(m.find_module("layers.1", error), module_index(m, "module.module.decoder.layers.1"));
    EXPECT_EQ(m.find_module("linear_fc2", error), -1);
    EXPECT_NE(error.find("ambiguous"), std::string::npos) << error;
    error.clear();
    EXPECT_EQ(m.find_module("layers.9.mlp", error), -1);
    EXPECT_NE(error.find("no module"), std::string::npos) << error;
    EXPECT_EQ(m.default_fault_module(), fc2) << "mid-network: the middle layer's MLP output";
    const SimModel small(2, 1);  // no layers: the last module with a weight
    EXPECT_EQ(small.modules()[static_cast<std::size_t>(small.default_fault_module())].name,
              "module.module.decoder.final_layernorm");
}

int param_index(const SimModel& m, const std::string& name) {
    for (std::size_t i = 0; i < m.params().size(); ++i)
        if (m.params()[i].name == name) return static_cast<int>(i);
    return -1;
}

TEST(SimModel, finds_a_weight_by_name_tail_or_module_and_picks_one_mid_network_by_default) {
    const SimModel m(16, 1);
    std::string error;
    const int fc2 = param_index(m, "module.module.decoder.layers.1.mlp.linear_fc2.weight");
    ASSERT_GE(fc2, 0);
    EXPECT_EQ(m.find_param("module.module.decoder.layers.1.mlp.linear_fc2.weight", error), fc2);
    EXPECT_EQ(m.find_param("layers.1.mlp.linear_fc2.weight", error), fc2);
    EXPECT_EQ(m.find_param("layers.1.mlp.linear_fc2", error), fc2) << "the module that owns it";
    EXPECT_EQ(m.find_param("linear_fc2.weight", error), -1);
    EXPECT_NE(error.find("ambiguous"), std::string::npos) << error;
    error.clear();
    EXPECT_EQ(m.find_param("layers.1.mlp", error), -1) << "a container owns no weight";
    EXPECT_NE(error.find("no weight"), std::string::npos) << error;
    EXPECT_EQ(m.default_fault_param(), fc2) << "the weight of the middle layer's MLP output";
    // A model too small for that weight: the first matrix from the middle on.
    const SimModel small(8, 1);
    EXPECT_EQ(small.params()[static_cast<std::size_t>(small.default_fault_param())].name,
              "module.module.decoder.layers.0.mlp.linear_fc1.weight");
    for (const auto& p : m.params()) {
        EXPECT_GE(p.update_ratio, 5e-4) << p.name;
        EXPECT_LE(p.update_ratio, 5e-3) << p.name;
    }
}

TEST(SimModel, a_dead_module_by_default_is_the_first_mlp_linear_mid_network) {
    const SimModel m(16, 1);
    EXPECT_EQ(m.modules()[static_cast<std::size_t>(m.default_dead_module())].name,
              "module.module.decoder.layers.1.mlp.linear_fc1");
    const SimModel small(2, 1);
    EXPECT_EQ(small.default_dead_module(), small.default_fault_module());
}

TEST(FaultSchedule, one_off_faults_act_on_the_first_pass_and_a_drift_in_every_pass) {
    const SimModel m(16, 1);
    std::string error;
    std::vector<Fault> faults = {{Fault::Type::nan, 11, 3, 100, "layers.0.mlp.linear_fc2"},
                                 {Fault::Type::spike, 5, 1, 50, ""},
                                 {Fault::Type::baddata, 7, 2, 25, ""},
                                 {Fault::Type::drift, 20, -1, 8, "layers.2.mlp"},
                                 {Fault::Type::restart, 25, -1, 100, ""},
                                 {Fault::Type::stall, 30, 6, 100, ""},
                                 {Fault::Type::spike, 99, -1, 100, ""}};  // after the run: dropped
    auto s = FaultSchedule::make(m, faults, 0, 40, 0, 4, error);
    ASSERT_TRUE(s) << error;
    EXPECT_EQ(s->faults().size(), 5u) << "the stall on rank 6 of 4 and the spike after the run are dropped";
    EXPECT_EQ(s->last_step(), 39);
    const StepFaults at11 = s->at(11, true);
    EXPECT_EQ(at11.ranks[3].nan_module, module_index(m, "module.module.decoder.layers.0.mlp.linear_fc2"));
    EXPECT_EQ(at11.ranks[0].nan_module, -1);
    EXPECT_EQ(s->at(11, false).ranks[3].nan_module, -1) << "a restarted job repeating step 11 does not meet it again";
    EXPECT_EQ(s->at(5, true).ranks[1].grad_factor, 50.0);
    EXPECT_EQ(s->at(5, true).ranks[0].grad_factor, 1.0);
    EXPECT_EQ(s->at(7, true).ranks[2].batch_factor, 25.0);
    EXPECT_TRUE(s->at(19, true).drift.empty());
    ASSERT_EQ(s->at(39, false).drift.size(), 1u);
    EXPECT_NEAR(s->at(39, false).drift[0].second, 8.0, 1e-9) << "the drift reaches its factor at the last step";
    EXPECT_NEAR(s->at(20, true).drift[0].second, std::pow(8.0, 1.0 / 20), 1e-9);
    EXPECT_EQ(s->restart_after(25), 20) << "resumes at the last multiple of 10 before the restart";
    EXPECT_EQ(s->restart_after(24), -1);
    EXPECT_EQ(s->stall_step(6), -1);
    faults = {{Fault::Type::nan, 3, -1, 100, "layers.7.mlp"}};
    EXPECT_FALSE(FaultSchedule::make(m, faults, 0, 40, 0, 4, error));
    EXPECT_NE(error.find("layers.7.mlp"), std::string::npos) << error;
}

TEST(FaultSchedule, corruptions_act_once_and_a_learning_rate_and_a_dead_module_from_their_step_in_every_pass) {
    const SimModel m(16, 1);
    std::string error;
    const std::vector<Fault> faults = {{Fault::Type::sdc, 12, 5, 1.01, ""},
                                       {Fault::Type::sdcgrad, 14, 6, 1.5, "layers.0.mlp.linear_fc1"},
                                       {Fault::Type::lr, 20, -1, 20, ""},
                                       {Fault::Type::lr, 30, -1, 0.5, ""},
                                       {Fault::Type::dead, 25, -1, 100, "layers.2.mlp.linear_fc2"},
                                       {Fault::Type::sdc, 15, 9, 2, ""}};  // rank 9 is not simulated here: dropped
    auto s = FaultSchedule::make(m, faults, 0, 40, 4, 4, error);
    ASSERT_TRUE(s) << error;
    ASSERT_EQ(s->faults().size(), 5u);
    EXPECT_EQ(s->faults()[0].param, m.default_fault_param());
    EXPECT_EQ(s->faults()[1].param, param_index(m, "module.module.decoder.layers.0.mlp.linear_fc1.weight"));
    const StepFaults at12 = s->at(12, true);
    ASSERT_EQ(at12.corruptions.size(), 1u);
    EXPECT_EQ(at12.corruptions[0].rank, 1) << "global rank 5 is the second of ranks 4-7";
    EXPECT_EQ(at12.corruptions[0].factor, 1.01);
    EXPECT_FALSE(at12.corruptions[0].gradient);
    EXPECT_TRUE(s->at(12, false).corruptions.empty()) << "a restarted job repeating step 12 does not meet it again";
    ASSERT_EQ(s->at(14, true).corruptions.size(), 1u);
    EXPECT_TRUE(s->at(14, true).corruptions[0].gradient);
    EXPECT_EQ(s->at(19, true).lr_factor, 1.0);
    EXPECT_EQ(s->at(20, true).lr_factor, 20.0);
    EXPECT_EQ(s->at(29, false).lr_factor, 20.0) << "a learning rate holds in every pass";
    EXPECT_EQ(s->at(30, true).lr_factor, 10.0);
    EXPECT_EQ(s->at(24, true).dead_module, -1);
    EXPECT_EQ(s->at(25, true).dead_module, module_index(m, "module.module.decoder.layers.2.mlp.linear_fc2"));
    EXPECT_EQ(s->at(25, true).dead_for, 0);
    EXPECT_EQ(s->at(39, false).dead_for, 14);
    const std::vector<Fault> unknown = {{Fault::Type::sdc, 3, 1, 1.01, "layers.7.mlp.linear_fc1"}};
    EXPECT_FALSE(FaultSchedule::make(m, unknown, 0, 40, 0, 4, error));
    EXPECT_NE(error.find("sdc@3"), std::string::npos) << error;
    EXPECT_NE(error.find("no weight"), std::string::npos) << error;
}

}  // namespace
}  // namespace msmon
