// Where a kind of series is produced within one training step, so that "which came first" can be answered
// between anomalies of the same step: the forward pass (activations) before the backward pass (activation
// gradients, then weight gradients before and after the all-reduce), then the optimizer's moments and weights,
// then what MindFormers logs at the end of the step.
#pragma once

#include <string_view>

namespace msmon {

inline int kind_step_order(std::string_view kind) {
    if (kind == "actv") return 0;
    if (kind == "actv_grad") return 1;
    if (kind == "grad_unreduced") return 2;
    if (kind == "grad_reduced") return 3;
    if (kind == "exp_avg") return 4;
    if (kind == "exp_avg_sq") return 5;
    if (kind == "param_origin" || kind == "param_updated") return 6;
    if (kind == "loss" || kind == "local_loss" || kind == "device_accum_local_loss") return 8;
    return 7;  // other msprobe prefixes and MindFormers norms
}

}  // namespace msmon
