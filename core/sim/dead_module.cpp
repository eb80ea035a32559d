// The forward and backward reach of a dead module (see the header).
#include "core/sim/dead_module.hpp"

namespace msmon {

DeadPath dead_path(const SimModel& model, int module) {
    const auto& values = model.values();
    const auto& modules = model.modules();
    const auto& params = model.params();
    DeadPath d;
    d.module = module;
    d.value = modules[static_cast<std::size_t>(module)].output;
    d.zero_values.assign(values.size(), false);
    d.zero_grads.assign(model.grads().size(), false);
    d.zero_params.assign(params.size(), false);
    // Values are in forward order: each one's inputs come before it.
    d.zero_values[static_cast<std::size_t>(d.value)] = true;
    for (std::size_t v = static_cast<std::size_t>(d.value) + 1; v < values.size(); ++v) {
        const auto& in = values[v].inputs;
        bool all = !in.empty();
        for (int i : in) all = all && d.zero_values[static_cast<std::size_t>(i)];
        d.zero_values[v] = all;
    }
    // Backward: a value gets no gradient when each of its uses is the dead output or gets none itself.
    std::vector<std::vector<int>> uses(values.size());
    for (std::size_t v = 0; v < values.size(); ++v)
        for (int i : values[v].inputs) uses[static_cast<std::size_t>(i)].push_back(static_cast<int>(v));
    std::vector<bool> no_grad(values.size(), false);
    for (std::size_t v = values.size(); v-- > 0;) {
        if (uses[v].empty()) continue;
        bool none = true;
        for (int u : uses[v]) none = none && (u == d.value || no_grad[static_cast<std::size_t>(u)]);
        no_grad[v] = none;
    }
    // A gradient index can be shared by two values (a block's output and the sum it joins): zero only if both are.
    std::vector<int> holders(d.zero_grads.size(), 0), silent(d.zero_grads.size(), 0);
    for (std::size_t v = 0; v < values.size(); ++v) {
        const int g = values[v].grad;
        if (g < 0) continue;
        ++holders[static_cast<std::size_t>(g)];
        silent[static_cast<std::size_t>(g)] += no_grad[v];
    }
    for (std::size_t g = 0; g < holders.size(); ++g) d.zero_grads[g] = holders[g] > 0 && silent[g] == holders[g];
    for (std::size_t m = 0; m < modules.size(); ++m) {
        const SimModule& mod = modules[m];
        const bool output_silent = mod.output_grad >= 0 && d.zero_grads[static_cast<std::size_t>(mod.output_grad)];
        // What a module passes back to its input: nothing through the dead one, nor through one that gets nothing.
        if ((static_cast<int>(m) == module || output_silent) && mod.input_grad >= 0)
            d.zero_grads[static_cast<std::size_t>(mod.input_grad)] = true;
        const bool input_zero = mod.input >= 0 && d.zero_values[static_cast<std::size_t>(mod.input)];
        // The dead module, and a child computing the same output (masked after it), get no weight gradient.
        const bool masked = mod.output == d.value;
        if (masked || input_zero || output_silent)
            for (int p : mod.params) d.zero_params[static_cast<std::size_t>(p)] = true;
    }
    return d;
}

}  // namespace msmon
