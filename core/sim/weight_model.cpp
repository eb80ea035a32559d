// The simulated weights' update (see the header).
#include "core/sim/weight_model.hpp"

#include <cmath>

namespace msmon {

namespace {

// A step's noise on the update ratio (log): it varies by a third from step to step, never 10× its recent median
// (what an optimizer-wide change shows as).
constexpr double kUpdateSigma = 0.3;

}  // namespace

WeightDraws WeightDraws::draw(KeyedNoise& noise) {
    WeightDraws d;
    d.z1 = noise.gauss();
    d.z2 = noise.gauss();
    d.z3 = noise.gauss();
    return d;
}

StatRow weight_stats(const SimParam& par, double norm, const WeightDraws& d) {
    if (std::isnan(norm)) return nan_row(par.numel);
    const double rms = norm / std::sqrt(par.numel);
    StatRow s;
    s.norm = norm;
    if (par.vector) {  // norm weights start at 1
        s.mean = rms * (1 + 0.001 * d.z1);
        s.max = rms * (1.1 + 0.01 * std::abs(d.z2));
        s.min = rms * (0.9 - 0.01 * std::abs(d.z3));
    } else {
        s.mean = rms * 0.001 * d.z1;
        s.max = rms * expected_max(par.numel) * (1 + 0.02 * d.z2);
        s.min = -rms * expected_max(par.numel) * (1 + 0.02 * d.z3);
    }
    return s;
}

double adam_step_rms(const std::vector<double>& m, const std::vector<double>& v, const std::vector<double>& g,
                     std::int64_t t) {
    const double c1 = 1 - std::pow(kBeta1, static_cast<double>(t)), c2 = 1 - std::pow(kBeta2, static_cast<double>(t));
    double sq = 0;
    for (std::size_t i = 0; i < m.size(); ++i) {
        const double mi = (kBeta1 * m[i] + (1 - kBeta1) * g[i]) / c1;
        const double vi = (kBeta2 * v[i] + (1 - kBeta2) * g[i] * g[i]) / c2;
        const double u = mi / (std::sqrt(vi) + 1e-8);
        sq += u * u;
    }
    return m.empty() ? 0.0 : std::sqrt(sq / static_cast<double>(m.size()));
}

double adam_decay(std::int64_t n) {
    return std::pow(kBeta1, static_cast<double>(n)) / std::sqrt(std::pow(kBeta2, static_cast<double>(n)));
}

NormStep norm_step(double pace, double grown, KeyedNoise& noise) {
    NormStep s;
    s.ratio = pace * std::exp(kUpdateSigma * noise.gauss());
    // The norm grows at first and settles where weight decay holds it: pulled back the further it went from where
    // it started, in steps of the current pace (a larger learning rate settles further out), so that no run,
    // however long, grows its weights without end.
    s.sign = noise.gauss() + 0.5 - 0.05 * grown / pace > 0 ? 1.0 : -1.0;
    return s;
}

}  // namespace msmon
