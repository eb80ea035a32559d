// Unit tests for core/sim/dead_module: what a dead module silences in the simulated GPT, forward (values computed
// only from its zeros) and backward (gradients whose every use ends in it, weights whose input is zero or whose
// output gets no gradient).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/sim/dead_module.hpp"

namespace msmon {
namespace {

int module_index(const SimModel& m, const std::string& name) {
    for (std::size_t i = 0; i < m.modules().size(); ++i)
        if (m.modules()[i].name == name) return static_cast<int>(i);
    return -1;
}

std::set<std::string> zero_params(const SimModel& m, const DeadPath& d) {
    std::set<std::string> out;
    for (std::size_t p = 0; p < m.params().size(); ++p)
        if (d.zero_params[p]) out.insert(m.params()[p].name);
    return out;
}

// The rows (module.input / module.output) whose value is all zeros.
std::set<std::string> zero_rows(const SimModel& m, const DeadPath& d) {
    std::set<std::string> out;
    for (const auto& mod : m.modules()) {
        if (d.zero_values[static_cast<std::size_t>(mod.input)]) out.insert(SimModel::row_name(mod, false));
        if (d.zero_values[static_cast<std::size_t>(mod.output)]) out.insert(SimModel::row_name(mod, true));
    }
    return out;
}

const std::string kLayer1 = "module.module.decoder.layers.1.";

TEST(SimDeadModule, a_dead_first_mlp_linear_zeroes_the_mlp_and_silences_its_weights_and_its_norm) {
    const SimModel m(16, 1);
    const int fc1 = module_index(m, kLayer1 + "mlp.linear_fc1");
    const DeadPath d = dead_path(m, fc1);
    EXPECT_EQ(d.module, fc1);
    EXPECT_EQ(d.value, m.modules()[static_cast<std::size_t>(fc1)].output);
    EXPECT_EQ(zero_rows(m, d),
              (std::set<std::string>{kLayer1 + "mlp.linear_fc1.output", kLayer1 + "mlp.linear_fc2.input",
                                     kLayer1 + "mlp.linear_fc2.output", kLayer1 + "mlp.output"}))
        << "the residual stream (the sum the MLP joins) is not zero";
    EXPECT_EQ(zero_params(m, d),
              (std::set<std::string>{kLayer1 + "pre_mlp_layernorm.weight", kLayer1 + "mlp.linear_fc1.weight",
                                     kLayer1 + "mlp.linear_fc2.weight"}));
    // Backward: nothing reaches the MLP's input through it, nor the norm's own input path; the stream still flows.
    const SimModule& norm = m.modules()[static_cast<std::size_t>(module_index(m, kLayer1 + "pre_mlp_layernorm"))];
    const SimModule& fc1_mod = m.modules()[static_cast<std::size_t>(fc1)];
    EXPECT_TRUE(d.zero_grads[static_cast<std::size_t>(fc1_mod.input_grad)]);
    EXPECT_TRUE(d.zero_grads[static_cast<std::size_t>(norm.input_grad)]);
    EXPECT_FALSE(d.zero_grads[static_cast<std::size_t>(fc1_mod.output_grad)])
        << "the gradient arriving at the dead output still comes from above";
    const SimModule& layer = m.modules()[static_cast<std::size_t>(module_index(m, "module.module.decoder.layers.1"))];
    EXPECT_FALSE(d.zero_grads[static_cast<std::size_t>(layer.input_grad)]);
    EXPECT_FALSE(d.zero_grads[static_cast<std::size_t>(layer.output_grad)]);
}

TEST(SimDeadModule, a_dead_second_linear_silences_the_whole_mlp_branch_backward_only) {
    const SimModel m(16, 1);
    const DeadPath d = dead_path(m, module_index(m, kLayer1 + "mlp.linear_fc2"));
    EXPECT_EQ(zero_rows(m, d), (std::set<std::string>{kLayer1 + "mlp.linear_fc2.output", kLayer1 + "mlp.output"}));
    EXPECT_EQ(zero_params(m, d),
              (std::set<std::string>{kLayer1 + "pre_mlp_layernorm.weight", kLayer1 + "mlp.linear_fc1.weight",
                                     kLayer1 + "mlp.linear_fc2.weight"}));
}

TEST(SimDeadModule, a_dead_container_masks_the_child_that_computes_its_output) {
    const SimModel m(16, 1);
    const DeadPath d = dead_path(m, module_index(m, kLayer1 + "mlp"));
    EXPECT_TRUE(zero_params(m, d).count(kLayer1 + "mlp.linear_fc2.weight"));
    EXPECT_FALSE(zero_params(m, d).count(kLayer1 + "self_attention.linear_qkv.weight"));
    EXPECT_FALSE(zero_params(m, d).count("module.module.decoder.layers.0.mlp.linear_fc2.weight"));
}

}  // namespace
}  // namespace msmon
