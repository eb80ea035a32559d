// The model the simulator trains: Megatron GPT parameters (what the weight-grad and optimizer CSVs list) and its
// modules in the order their forward hooks finish, with the activations that flow between them (what the actv and
// actv_grad CSVs list). Several rows can show one tensor, as in real output: a module's input is the output of
// the module before it, a container's output is its last child's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace msmon {

// What an activation (or its gradient) is, for its scale, its noise and how faults reach it.
enum class ActvType {
    data,        // the batch
    resid,       // the residual stream: embedding output, layer inputs and outputs, a norm's input
    ln_out,      // a LayerNorm's output (normalised: almost the same every step)
    linear_out,  // linear_qkv / linear_fc1 output
    context,     // the attention context (linear_proj's input)
    gelu,        // the MLP's GELU output (linear_fc2's input)
    block_out,   // linear_proj / linear_fc2 output (what a block adds to the residual stream)
    logits,
};

struct SimParam {
    std::string name;   // "module.module.decoder.layers.0.mlp.linear_fc1.weight"
    std::string shape;  // pandas text: "[4096, 1024]" or "[1024]"
    double numel = 1;
    bool vector = false;     // 1-D (a LayerNorm weight): noisier, as biases and norm weights are in real runs
    double grad_norm = 1;    // typical gradient norm at the start of training
    double weight_norm = 1;  // parameter norm at the start
    // How far an optimizer step moves the weight's norm, relative to it, early in training (5e-4 .. 5e-3):
    // |‖param_updated‖ − ‖param_origin‖| / ‖param_origin‖ as msprobe's norms show an update.
    double update_ratio = 1e-3;
    int module = -1;
    enum class Role { embedding, block, final_norm, head } role = Role::block;
};

struct SimValue {
    ActvType type = ActvType::resid;
    std::string shape;
    double rows = 1, width = 1;  // numel = rows × width
    double depth = 0;            // position in the residual stream, in layers (0: the embedding output)
    std::vector<int> inputs;     // values it is computed from (a NaN in any of them reaches it)
    enum class Mix { elementwise, rows, sequence } mix = Mix::elementwise;  // how a NaN spreads into it
    int grad = -1;  // its gradient (index into grads), -1 for the batch
    double numel() const { return rows * width; }
};

struct SimGrad {
    ActvType type = ActvType::resid;
    double rows = 1, width = 1;
    bool norm_input =
        false;  // the gradient a LayerNorm passes to its input (only its own path: tiny under a bad batch)
    bool past_stream = false;  // the final norm's output and the logits: after the residual stream
};

struct SimModule {
    std::string name;                       // "" for the root (rows ".input", ".output")
    int input = -1, output = -1;            // values
    int input_grad = -1, output_grad = -1;  // grads; input_grad -1: the batch (a row of nan placeholders)
    std::vector<int> params;
    bool container = false;
};

class SimModel {
public:
    // `params` tensors (exactly that many), their gradient scales drawn from `seed`.
    SimModel(int params, std::uint64_t seed);

    const std::vector<SimParam>& params() const { return params_; }
    const std::vector<SimModule>& modules() const { return modules_; }  // forward order (hooks finishing)
    const std::vector<SimValue>& values() const { return values_; }
    const std::vector<SimGrad>& grads() const { return grads_; }
    int layers() const { return layers_; }

    // "<module>.input" / "<module>.output" as the CSVs write them.
    static std::string row_name(const SimModule& m, bool output);

    // A module named by a fault (see fault_plan.hpp); -1 with `error` set if none or several match.
    int find_module(std::string_view text, std::string& error) const;
    // Where a fault without a module goes: the MLP output of a layer mid-network.
    int default_fault_module() const;
    // Where dead@ without a module goes: the first MLP linear of a layer mid-network (its output, the second
    // linear's input and the MLP's output all zero when it dies), else default_fault_module().
    int default_dead_module() const;
    // A weight named by a fault: a parameter name, a unique tail of one, or the module that owns it (its first
    // parameter); -1 with `error` set if none or several match.
    int find_param(std::string_view text, std::string& error) const;
    // Where sdc@ and sdcgrad@ without a weight go: the weight of default_fault_module(), else (a model too small to
    // have it) the first matrix from the middle on.
    int default_fault_param() const;
    // The first module of the forward pass (its input is the batch).
    int first_module() const { return 0; }

private:
    std::vector<SimParam> params_;
    std::vector<SimModule> modules_;
    std::vector<SimValue> values_;
    std::vector<SimGrad> grads_;
    int layers_ = 0;
};

}  // namespace msmon
