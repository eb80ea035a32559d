// How an optimizer step moves a simulated weight, as msprobe's statistics of it show: the norm's step (the update
// ratio and which way it goes), the statistics drawn for a norm, and Adam's step size from its moments.
#pragma once

#include <cstdint>
#include <vector>

#include "core/sim/keyed_noise.hpp"
#include "core/sim/sim_model.hpp"
#include "core/sim/tensor_stats.hpp"

namespace msmon {

inline constexpr double kBeta1 = 0.9, kBeta2 = 0.999;  // Adam's, as the simulated job sets them

// The weights' statistics drawn for one norm: replicas draw the same, and a rank's own copy of a weight draws
// what its replicas draw at that step, so that only its norm sets it apart.
struct WeightDraws {
    double z1 = 0, z2 = 0, z3 = 0;
    static WeightDraws draw(KeyedNoise& noise);
};

StatRow weight_stats(const SimParam& par, double norm, const WeightDraws& d);

// One update of a weight's norm: by `ratio` of it, up (sign 1) or down (-1).
struct NormStep {
    double ratio = 0, sign = 1;
};
// `pace`: the update ratio before this step's noise; `grown`: log of the norm over its starting norm.
NormStep norm_step(double pace, double grown, KeyedNoise& noise);

// The rms of Adam's step m̂/(√v̂ + ε) once gradient `g` is folded into the moments at update `t` (1-based):
// how a copy whose moments differ moves against its replicas.
double adam_step_rms(const std::vector<double>& m, const std::vector<double>& v, const std::vector<double>& g,
                     std::int64_t t);

// Adam's step after `n` updates with no gradient: the first moment decays by β1 each, the second by β2.
double adam_decay(std::int64_t n);

}  // namespace msmon
