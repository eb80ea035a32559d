// What a dead module (dead@) silences in the simulated model. Its output is all zeros (a mask, a saturated
// activation: the module's hook writes zeros). Forward, a value computed only from zeros is zero too (a linear
// without bias, a LayerNorm, attention over zeros); a sum with the residual stream is not. Backward, nothing flows
// through the module to its input, so a value whose every use ends in it gets no gradient. A weight gradient is
// zero when its module's input is zero or no gradient reaches its output.
#pragma once

#include <vector>

#include "core/sim/sim_model.hpp"

namespace msmon {

struct DeadPath {
    int module = -1;                // the dead module
    int value = -1;                 // its output
    std::vector<bool> zero_values;  // per value: all zeros in the forward pass
    std::vector<bool> zero_grads;   // per activation gradient: all zeros
    std::vector<bool> zero_params;  // per parameter: its weight gradient is all zeros
};

DeadPath dead_path(const SimModel& model, int module);

}  // namespace msmon
