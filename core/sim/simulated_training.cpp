// Data-parallel training as the CSVs see it, calibrated against real msprobe output.
//
// The reference: the shared fixture msprobe-faults/healthy, which only tests read (real msprobe TrainerMon, 4 DDP
// ranks each fed its own data, Adam, 50 steps). Two measures of the norm, per kind (weight tensors split 1-D /
// 2-D): cross-rank |log(x_rank / median over ranks)| at one step, and step-to-step |log(x_t / x_t-1)| along one rank's
// series; median / p95 / p99 / max, real run against this simulator (4 ranks, 50 steps, 16 tensors, --xy, seeds 1-3
// pooled; tests/e2e/simulator_realism_test.cpp prints this table and holds the simulator to it):
//
//                       cross-rank                                 step-to-step
//                       real                  simulated            real                  simulated
//   grad_unreduced 1-D  .161 .715 1.01 1.67   .160 .608 .824 1.20  .296 .983 1.46 2.19   .369 1.03 1.32 1.61
//   grad_unreduced 2-D  .092 .350 .455 .870   .079 .292 .386 .551  .164 .472 .612 .802   .184 .490 .588 .679
//   grad_reduced 1-D    0 (the same on        0                    .317 1.08 1.35 1.83   .327 .936 1.29 1.66
//   grad_reduced 2-D       every rank)        0                    .148 .490 .638 .742   .142 .402 .499 .619
//   exp_avg 1-D         0                     0                    .110 .501 .774 1.28   .115 .414 .698 .886
//   exp_avg 2-D         0                     0                    .045 .165 .456 .639   .050 .175 .336 .487
//   actv                .017 .104 .164 .299   .012 .093 .138 .246  .034 .153 .226 .361   .027 .140 .195 .300
//   actv_grad           .057 .233 .361 .621   .051 .206 .285 .511  .104 .341 .496 .952   .099 .306 .402 .718
// (exp_avg_sq is mostly 0.0 or 1e-06 at msprobe's 6 decimals, in both: its steps are rounding.) LayerNorm outputs
// barely move (~0.002), logits and the residual stream most (~0.06-0.08) — per type here as there.
//
// What the real run shows, and how it is modelled here:
// - A rank's gradient is the mean gradient plus its own batch's noise, about 3.6x larger (reduced / unreduced norm
//   0.4-0.55 with 4 ranks). Each tensor is simulated as a small vector (28 elements for a matrix, 6 for a norm
//   weight: fewer effective dimensions make 1-D tensors noisier, as biases and norm weights are in the real run),
//   its norm and extremes scaled to the real size. grad_reduced is the mean of the ranks' vectors (one text on
//   every rank), Adam's exp_avg / exp_avg_sq follow from it (betas 0.9 / 0.999), read as msprobe reads them:
//   before the step's update (the real NaN run's exp_avg is still finite at the NaN step; none at step 0).
// - A rank's deviations are partly shared by its tensors (pairwise correlation 0.5 in grad_unreduced, 0.93 in
//   actv_grad in the real run): one loss scale per rank and step. A step's magnitude is partly common to every
//   rank (grad_reduced moves step to step as much as one rank's gradient does). Activations vary per rank and
//   step (the data), per type: LayerNorm outputs barely, the residual stream and the logits most.
// - Steps are noise around slow trends: gradient norms fall to ~40% over the first ~10-20 steps and level off;
//   deeper activations grow ~20-30% over the first 50 steps; activation gradients fall.
// - Every deviation is bounded near the real healthy run's largest (soft_bound): however many ranks and steps, a
//   healthy simulated run has no jump and no rank further off than the real one shows.
// Faults, as the real nan and baddata runs show them (FAULT.txt there):
// - nan: the module's output gets nans 0 → 1; modules computed from it follow on that rank and micro-step, the
//   count growing as norms and linears spread it across a row and attention across the sequence; every
//   activation gradient and weight gradient of that rank; grad_reduced on every rank; everything from the next
//   step on, every rank (the batch rows stay finite).
// - baddata ×F: the batch ×F, the residual stream ×~0.9F decaying ×0.87 per layer, LayerNorm outputs unchanged;
//   that rank's activation gradients ×~2/F (a LayerNorm's own input path ×~2/F·1.5/F), its block weight
//   gradients ×~2/F; grad_reduced moves on every rank through the mean; the next step is normal.
// - spike ×F: a rank's (or every rank's) weight and activation gradients ×F; grad_reduced follows through the mean.
// - drift ×F: one module's output and its weight gradients grow geometrically, to ×F at the last step.
// A fault changes nothing else: every draw is keyed by what it is for, so a run with a fault and the same seed
// without it differ only where the fault acts.
#include "core/sim/simulated_training.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/sim/keyed_noise.hpp"

namespace msmon {

namespace {

// Noise channels.
enum : std::int64_t {
    kSignalNoise = 1,
    kGradNoise,
    kRankScaleNoise,
    kWeightNoise,
    kActvNoise,
    kActvGradNoise,
};

constexpr double kBeta1 = 0.9, kBeta2 = 0.999;
constexpr double kNoiseToSignal = 3.6;       // a rank's batch noise against the mean gradient
constexpr double kSignalCorrelation = 0.25;  // of the mean gradient from one step to the next
constexpr double kRankScaleSigma = 0.12;     // the shared per-rank, per-step loss scale (log)
constexpr double kOwnSigmaVector = 0.23, kOwnSigmaMatrix = 0.08;
constexpr double kCommonSigmaVector = 0.17, kCommonSigmaMatrix = 0.09;  // a step's magnitude for every rank (log)
constexpr double kSignalSigmaVector = 0.5, kSignalSigmaMatrix = 0.26;   // the mean gradient's length, per step (log)
constexpr int kDimsVector = 6, kDimsMatrix = 28;
constexpr double kZeroEps = 1e-8;  // msprobe's `zeros`: |x| < eps
// The largest deviation (log) of one tensor's gradient norm from its typical value: half the largest step-to-step
// change the real healthy run shows (2.19 for 1-D tensors, 0.80 for matrices).
constexpr double kBoundVector = 0.9, kBoundMatrix = 0.34;

// x unchanged up to 60% of `bound`, then bent smoothly towards it: the real healthy run's largest deviations are
// where a long simulated run stops, however many draws it makes.
double soft_bound(double x, double bound) {
    const double knee = 0.6 * bound, a = std::abs(x);
    if (a <= knee) return x;
    return std::copysign(knee + (bound - knee) * std::tanh((a - knee) / (bound - knee)), x);
}

double gradient_trend(std::int64_t step) {
    return 0.4 + 0.6 * std::exp(-static_cast<double>(step) / 8.0);
}

// The expected largest of n standard normals: how far a tensor's extremes sit from its mean, in rms.
double expected_max(double n) {
    static const double small[] = {0, 0, 0.564, 0.846, 1.029, 1.163, 1.267, 1.352};
    if (n < 8) return small[static_cast<int>(std::max(n, 0.0))];
    const double l = std::sqrt(2 * std::log(n));
    return l - (std::log(std::log(n)) + std::log(4 * 3.141592653589793)) / (2 * l) + 0.12;
}

StatRow nan_row(double count) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {nan, nan, nan, nan, count, 0.0};
}

// Statistics of a tensor of `numel` elements from `k` of them; `nonneg` for exp_avg_sq.
StatRow vector_stats(const double* x, int k, double numel, bool nonneg) {
    double sum = 0, sq = 0, lo = x[0], hi = x[0];
    int zeros = 0;
    for (int i = 0; i < k; ++i) {
        if (std::isnan(x[i])) return nan_row(numel);
        sum += x[i];
        sq += x[i] * x[i];
        lo = std::min(lo, x[i]);
        hi = std::max(hi, x[i]);
        zeros += std::abs(x[i]) < kZeroEps;
    }
    const double kd = k, mean_k = sum / kd;
    StatRow s;
    s.norm = std::sqrt(sq * numel / kd);
    s.zeros = zeros / kd;
    s.nans = 0;
    const double spread = numel > kd ? expected_max(numel) / expected_max(kd) : 1.0;
    if (nonneg) {
        s.mean = mean_k;
        s.max = mean_k + (hi - mean_k) * spread;
        s.min = lo / spread;
    } else {
        s.mean = mean_k * std::sqrt(kd / numel);  // the mean of many elements is closer to zero than of a few
        s.max = s.mean + (hi - mean_k) * spread;
        s.min = s.mean - (mean_k - lo) * spread;
    }
    return s;
}

// Statistics of an activation (or its gradient) of the given norm; `noise` jitters the extremes.
StatRow actv_stats(double norm, double numel, ActvType type, KeyedNoise& noise) {
    const double rms = norm / std::sqrt(numel), ev = expected_max(numel);
    const double z1 = noise.gauss(), z2 = noise.gauss(), z3 = noise.gauss();
    StatRow s;
    s.norm = norm;
    switch (type) {
        case ActvType::gelu:  // GELU's floor is -0.17 of its input's scale
            s.mean = rms * (0.35 + 0.01 * z1);
            s.max = s.mean + rms * ev * (1 + 0.04 * z2);
            s.min = -0.4 * rms * (1 + 0.01 * z3);
            break;
        default:
            s.mean = rms * 0.02 * z1;
            s.max = s.mean + rms * ev * (1 + 0.04 * z2);
            s.min = s.mean - rms * ev * (1 + 0.04 * z3);
    }
    return s;
}

// ---- activation scales per type (rms per element, noise σ per rank and step), from the real run ----

double actv_rms(const SimValue& v) {
    switch (v.type) {
        case ActvType::data:
            return 1.0;
        case ActvType::resid:
            return 0.57 * (1 + 0.06 * v.depth);
        case ActvType::ln_out:
            return 1.0;
        case ActvType::linear_out:
            return 0.85;
        case ActvType::context:
            return 0.5;
        case ActvType::gelu:
            return 0.4;
        case ActvType::block_out:
            return 0.25;
        case ActvType::logits:
            return 0.4;
    }
    return 1.0;
}

// The largest deviation (log) of an activation norm from its typical value: half the largest step-to-step change of
// its kind in the real healthy run.
double actv_bound(ActvType type) {
    switch (type) {
        case ActvType::data:
            return 0.13;
        case ActvType::resid:
            return 0.16;
        case ActvType::ln_out:
            return 0.006;
        case ActvType::linear_out:
            return 0.067;
        case ActvType::context:
        case ActvType::gelu:
            return 0.13;
        case ActvType::block_out:
            return 0.146;
        case ActvType::logits:
            return 0.18;
    }
    return 0.13;
}

double grad_bound(const SimGrad& g) {
    if (g.norm_input) return 0.47;
    switch (g.type) {
        case ActvType::resid:
            return 0.47;
        case ActvType::ln_out:
            return 0.28;
        case ActvType::logits:
            return 0.11;
        default:
            return 0.23;
    }
}

double actv_sigma(ActvType type) {
    switch (type) {
        case ActvType::ln_out:
            return 0.002;
        case ActvType::linear_out:
            return 0.027;
        case ActvType::context:
        case ActvType::gelu:
            return 0.052;
        case ActvType::block_out:
            return 0.05;
        case ActvType::logits:
            return 0.078;
        default:
            return 0.06;
    }
}

// Deeper activations and the logits grow over training (the real run: ~+20-30% over 50 steps).
double actv_trend(const SimValue& v, std::int64_t step, int layers) {
    if (v.type != ActvType::resid && v.type != ActvType::block_out && v.type != ActvType::logits) return 1.0;
    const double depth = layers > 0 ? std::min(1.0, v.depth / layers) : 1.0;
    return 1 + (0.1 + 0.15 * depth) * (1 - std::exp(-static_cast<double>(step) / 40.0));
}

double grad_norm_base(const SimGrad& g) {
    if (g.norm_input) return 0.06;
    switch (g.type) {
        case ActvType::resid:
            return 0.13;
        case ActvType::ln_out:
            return g.past_stream ? 0.09 : 0.03;
        case ActvType::linear_out:
            return 0.045;
        case ActvType::context:
        case ActvType::gelu:
            return 0.07;
        case ActvType::logits:
            return 0.16;
        default:
            return 0.1;
    }
}

double grad_own_sigma(const SimGrad& g) {
    if (g.norm_input) return 0.05;
    switch (g.type) {
        case ActvType::resid:
            return 0.06;
        case ActvType::ln_out:
            return 0.04;
        case ActvType::logits:
            return 0.05;
        default:
            return 0.03;
    }
}

// A bad batch ×F: the residual stream carries it, each layer's own contribution diluting it.
double resid_factor(double f, double depth) {
    return f == 1 ? 1.0 : 1 + (f - 1) * 0.9 * std::pow(0.87, depth);
}

// ... and behind every LayerNorm the gradients shrink by about 2/F.
double norm_shrink(double f) {
    return f > 2 ? 2 / f : 1.0;
}

double param_batch_factor(const SimParam& p, double f) {
    const double q = norm_shrink(f);
    switch (p.role) {
        case SimParam::Role::embedding:
            return 1.0;
        case SimParam::Role::block:
            return q;
        case SimParam::Role::final_norm:
            return 0.5 + 0.5 * q;
        case SimParam::Role::head:
            return 0.75 + 0.25 * q;
    }
    return 1.0;
}

}  // namespace

SimulatedTraining::SimulatedTraining(const SimModel& model, int first_rank, int ranks, bool activations,
                                     int micro_steps, std::uint64_t seed)
    : model_(model),
      first_rank_(first_rank),
      ranks_(ranks),
      micro_steps_(std::max(1, micro_steps)),
      activations_(activations),
      seed_(seed) {
    const auto& params = model.params();
    for (std::size_t p = 0; p < params.size(); ++p) {
        const int dims =
            static_cast<int>(std::min<double>(params[p].numel, params[p].vector ? kDimsVector : kDimsMatrix));
        dims_.push_back(dims);
        std::vector<double> signal(static_cast<std::size_t>(dims));
        KeyedNoise noise(seed, {kSignalNoise, static_cast<std::int64_t>(p), -1, 0});
        for (double& c : signal) c = noise.gauss();
        state_.signal.push_back(std::move(signal));
        state_.m.emplace_back(static_cast<std::size_t>(dims), 0.0);
        state_.v.emplace_back(static_cast<std::size_t>(dims), 0.0);
        state_.weight.push_back(params[p].weight_norm);
    }
    unreduced_.resize(params.size() * static_cast<std::size_t>(ranks));
    reduced_.resize(params.size());
    exp_avg_.resize(params.size());
    exp_avg_sq_.resize(params.size());
    origin_.resize(params.size());
    updated_.resize(params.size());
    rank_scale_.resize(static_cast<std::size_t>(ranks));
    const std::size_t slots = static_cast<std::size_t>(ranks) * static_cast<std::size_t>(micro_steps_);
    nan_module_.assign(slots, -1);
    clean_output_.resize(slots);
    if (activations_) {
        actv_.resize(slots * model.values().size());
        actv_grad_.resize(slots * model.grads().size());
    }
}

const StatRow& SimulatedTraining::grad_unreduced(int rank, int param) const {
    return unreduced_[static_cast<std::size_t>(rank) * model_.params().size() + static_cast<std::size_t>(param)];
}

const StatRow& SimulatedTraining::actv(int rank, int micro, int value) const {
    return actv_[slot(rank, micro) * model_.values().size() + static_cast<std::size_t>(value)];
}

const StatRow& SimulatedTraining::actv_grad(int rank, int micro, int grad) const {
    return actv_grad_[slot(rank, micro) * model_.grads().size() + static_cast<std::size_t>(grad)];
}

SimulatedTraining::State SimulatedTraining::state() const {
    return state_;
}

void SimulatedTraining::restore(const State& s) {
    state_ = s;
}

void SimulatedTraining::run_step(std::int64_t step, int launch, const StepFaults& faults) {
    for (int r = 0; r < ranks_; ++r) {
        KeyedNoise noise(seed_, {kRankScaleNoise, first_rank_ + r, step, launch});
        rank_scale_[static_cast<std::size_t>(r)] = noise.gauss();
    }
    const bool poisoned = state_.poisoned;
    run_gradients(step, launch, faults);
    if (activations_) {
        const bool after = state_.poisoned;
        state_.poisoned = poisoned;  // activations of this step see the weights this step started with
        run_activations(step, launch, faults);
        state_.poisoned = after;
    }
}

void SimulatedTraining::run_gradients(std::int64_t step, int launch, const StepFaults& faults) {
    const auto& params = model_.params();
    const double trend = gradient_trend(step);
    const double mix = 1 / std::sqrt(1 + kNoiseToSignal * kNoiseToSignal);
    had_state_ = state_.updates > 0;
    bool poison_next = state_.poisoned;
    std::vector<double> g, sum, healthy;
    for (std::size_t p = 0; p < params.size(); ++p) {
        const SimParam& par = params[p];
        const int k = dims_[p];
        const double elem = par.grad_norm * trend / std::sqrt(par.numel);
        double drift = 1;
        for (const auto& [module, factor] : faults.drift)
            if (module == par.module) drift *= factor;
        // The mean gradient turns a little each step; its length varies as a norm of k normals, bounded.
        auto& signal = state_.signal[p];
        KeyedNoise sn(seed_, {kSignalNoise, static_cast<std::int64_t>(p), step, launch});
        double sq = 0;
        for (double& c : signal) {
            c = kSignalCorrelation * c + std::sqrt(1 - kSignalCorrelation * kSignalCorrelation) * sn.gauss();
            sq += c * c;
        }
        // This step's magnitude for every rank alike (a harder step for all): what moves grad_reduced.
        const double common = sn.gauss() * (par.vector ? kCommonSigmaVector : kCommonSigmaMatrix);
        const double signal_length =
            std::exp(soft_bound(sn.gauss() * (par.vector ? kSignalSigmaVector : kSignalSigmaMatrix) + common,
                                par.vector ? kBoundVector : kBoundMatrix)) *
            std::sqrt(k / std::max(sq, 1e-12));
        for (double& c : signal) c *= signal_length;
        const double signal_sq = sq * signal_length * signal_length;
        sum.assign(static_cast<std::size_t>(k), 0.0);
        healthy.assign(static_cast<std::size_t>(k), 0.0);
        g.resize(static_cast<std::size_t>(k));
        const double bound = par.vector ? kBoundVector : kBoundMatrix;
        bool any_nan = state_.poisoned;
        for (int r = 0; r < ranks_; ++r) {
            const auto& rf = faults.ranks[static_cast<std::size_t>(r)];
            StatRow& out = unreduced_[static_cast<std::size_t>(r) * params.size() + p];
            if (state_.poisoned || rf.nan_module >= 0) {
                out = nan_row(par.numel);
                any_nan = true;
                continue;
            }
            KeyedNoise rn(seed_, {kGradNoise, static_cast<std::int64_t>(p), first_rank_ + r, step, launch});
            // The batch noise: a direction across the mean gradient's, and a length that varies as a norm of k
            // normals does (log σ 1/√(2k)) and as the tensor's own share of the batch (own σ), bounded so that a
            // healthy norm never leaves the real run's range however long the run.
            const double own = par.vector ? kOwnSigmaVector : kOwnSigmaMatrix;
            const double log_length =
                soft_bound(std::sqrt(own * own + 1 / (2.0 * k)) * rn.gauss() +
                               kRankScaleSigma * rank_scale_[static_cast<std::size_t>(r)] + common,
                           bound);
            double along = 0;
            for (int i = 0; i < k; ++i) {
                g[static_cast<std::size_t>(i)] = rn.gauss();
                along += g[static_cast<std::size_t>(i)] * signal[static_cast<std::size_t>(i)];
            }
            along = k > 1 ? along / std::max(signal_sq, 1e-12) : 0.0;
            sq = 0;
            for (int i = 0; i < k; ++i) {
                double& x = g[static_cast<std::size_t>(i)];
                x -= along * signal[static_cast<std::size_t>(i)];
                sq += x * x;
            }
            const double length = std::exp(log_length) * std::sqrt(k / std::max(sq, 1e-12));
            const double factor = rf.grad_factor * param_batch_factor(par, rf.batch_factor) * drift;
            for (int i = 0; i < k; ++i) {
                double& x = g[static_cast<std::size_t>(i)];
                x = elem * mix * (signal[static_cast<std::size_t>(i)] + kNoiseToSignal * length * x);
                healthy[static_cast<std::size_t>(i)] += x;
                x *= factor;
                sum[static_cast<std::size_t>(i)] += x;
            }
            out = vector_stats(g.data(), k, par.numel, false);
        }
        auto& m = state_.m[p];
        auto& v = state_.v[p];
        if (any_nan) {
            reduced_[p] = nan_row(par.numel);
            std::fill(sum.begin(), sum.end(), std::numeric_limits<double>::quiet_NaN());
            poison_next = true;
        } else {
            // The mean, its length kept within the bound too: averaging a few ranks' noise in few dimensions
            // could cancel it to far less than the real run ever shows.
            double healthy_sq = 0;
            for (double x : healthy) healthy_sq += x * x;
            const double typical = elem * mix * ranks_ * std::sqrt(k * (1 + kNoiseToSignal * kNoiseToSignal / ranks_));
            const double natural = std::sqrt(healthy_sq) / typical;
            const double keep = natural > 0 ? std::exp(soft_bound(std::log(natural), bound)) / natural : 1.0;
            for (double& x : sum) x *= keep / ranks_;
            reduced_[p] = vector_stats(sum.data(), k, par.numel, false);
        }
        // Adam's state as msprobe reads it: before this step's update.
        if (had_state_) {
            exp_avg_[p] = vector_stats(m.data(), k, par.numel, false);
            exp_avg_sq_[p] = vector_stats(v.data(), k, par.numel, true);
        }
        for (int i = 0; i < k; ++i) {
            const double x = sum[static_cast<std::size_t>(i)];
            m[static_cast<std::size_t>(i)] = kBeta1 * m[static_cast<std::size_t>(i)] + (1 - kBeta1) * x;
            v[static_cast<std::size_t>(i)] = kBeta2 * v[static_cast<std::size_t>(i)] + (1 - kBeta2) * x * x;
        }
        // The weights: the same on every rank; a NaN update poisons them.
        double& w = state_.weight[p];
        KeyedNoise wn(seed_, {kWeightNoise, static_cast<std::int64_t>(p), step, launch});
        auto weight_stats = [&](double norm) {
            if (std::isnan(norm)) return nan_row(par.numel);
            const double rms = norm / std::sqrt(par.numel), z1 = wn.gauss(), z2 = wn.gauss(), z3 = wn.gauss();
            StatRow s;
            s.norm = norm;
            if (par.vector) {  // norm weights start at 1
                s.mean = rms * (1 + 0.001 * z1);
                s.max = rms * (1.1 + 0.01 * std::abs(z2));
                s.min = rms * (0.9 - 0.01 * std::abs(z3));
            } else {
                s.mean = rms * 0.001 * z1;
                s.max = rms * expected_max(par.numel) * (1 + 0.02 * z2);
                s.min = -rms * expected_max(par.numel) * (1 + 0.02 * z3);
            }
            return s;
        };
        origin_[p] = weight_stats(w);  // drawn even when replaced below: the noise that follows stays the same
        if (state_.weight_stats.size() < params.size()) state_.weight_stats.resize(params.size());
        if (state_.updates > 0) origin_[p] = state_.weight_stats[p];
        w = any_nan ? std::numeric_limits<double>::quiet_NaN()
                    : w * (1 + (par.vector ? 0.0002 * wn.gauss() : 0.0005 * std::abs(wn.gauss())));
        updated_[p] = weight_stats(w);
        state_.weight_stats[p] = updated_[p];
    }
    ++state_.updates;
    state_.poisoned = poison_next;
}

void SimulatedTraining::run_activations(std::int64_t step, int launch, const StepFaults& faults) {
    const auto& values = model_.values();
    const auto& grads = model_.grads();
    const auto& modules = model_.modules();
    const double grad_trend = 0.6 + 0.4 * std::exp(-static_cast<double>(step) / 25.0);
    struct Taint {
        double rows = 0, count = 0;
    };
    std::vector<Taint> taint(values.size());
    for (int r = 0; r < ranks_; ++r) {
        const auto& rf = faults.ranks[static_cast<std::size_t>(r)];
        const double f = rf.batch_factor, shrink = norm_shrink(f);
        for (int micro = 0; micro < micro_steps_; ++micro) {
            const std::size_t at = slot(r, micro);
            KeyedNoise an(seed_, {kActvNoise, first_rank_ + r, step, launch, micro});
            KeyedNoise gn(seed_, {kActvGradNoise, first_rank_ + r, step, launch, micro});
            StatRow* actv = &actv_[at * values.size()];
            StatRow* agrad = &actv_grad_[at * grads.size()];
            for (std::size_t i = 0; i < values.size(); ++i) {
                const SimValue& v = values[i];
                double norm = std::sqrt(v.numel()) * actv_rms(v) * actv_trend(v, step, model_.layers()) *
                              std::exp(soft_bound(actv_sigma(v.type) * an.gauss(), actv_bound(v.type)));
                if (v.type == ActvType::data) norm *= f;
                if (v.type == ActvType::resid) norm *= resid_factor(f, v.depth);
                for (const auto& [module, factor] : faults.drift)
                    if (modules[static_cast<std::size_t>(module)].output == static_cast<int>(i)) norm *= factor;
                actv[i] = actv_stats(norm, v.numel(), v.type, an);
                if (state_.poisoned && v.type != ActvType::data) actv[i] = nan_row(v.numel());
            }
            // A NaN planted in micro-step 0 reaches what is computed from it.
            const int nan_module = micro == 0 && !state_.poisoned ? rf.nan_module : -1;
            nan_module_[at] = nan_module;
            double nan_rows = 0;
            if (nan_module >= 0) {
                const int origin = modules[static_cast<std::size_t>(nan_module)].output;
                clean_output_[at] = actv[origin];
                std::fill(taint.begin(), taint.end(), Taint{});
                taint[static_cast<std::size_t>(origin)] = {1, 1};
                for (std::size_t i = static_cast<std::size_t>(origin); i < values.size(); ++i) {
                    const SimValue& v = values[i];
                    Taint t = taint[i];
                    for (int in : v.inputs) {
                        const Taint& ti = taint[static_cast<std::size_t>(in)];
                        if (ti.count <= 0) continue;
                        switch (v.mix) {
                            case SimValue::Mix::elementwise:
                                t.rows = std::max(t.rows, ti.rows);
                                t.count = std::max(t.count, ti.count);
                                break;
                            case SimValue::Mix::rows:
                                t.rows = std::max(t.rows, ti.rows);
                                t.count = t.rows * v.width;
                                break;
                            case SimValue::Mix::sequence:
                                t.rows = v.rows;
                                t.count = v.numel();
                                break;
                        }
                    }
                    taint[i] = t;
                    if (t.count > 0) {
                        actv[i] = nan_row(t.count);
                        nan_rows = std::max(nan_rows, t.rows);
                    }
                }
            }
            // Activation gradients: the rank's loss scale, shared, and their own noise.
            const double shared = rank_scale_[static_cast<std::size_t>(r)] + 0.3 * gn.gauss();
            for (std::size_t i = 0; i < grads.size(); ++i) {
                const SimGrad& g = grads[i];
                const double deviation =
                    0.1 * shared * (g.type == ActvType::logits ? 0.5 : 1.0) + grad_own_sigma(g) * gn.gauss();
                double norm = grad_norm_base(g) * grad_trend * std::exp(soft_bound(deviation, grad_bound(g)));
                norm *= rf.grad_factor;
                if (!g.past_stream) norm *= shrink * (g.norm_input && f > 1.5 ? 1.5 / f : 1.0);
                agrad[i] = actv_stats(norm, g.rows * g.width, g.type, gn);
                if (state_.poisoned) agrad[i] = nan_row(g.rows * g.width);
                else if (nan_module >= 0) agrad[i] = nan_row(std::max(1.0, nan_rows) * g.width);
            }
        }
    }
}

}  // namespace msmon
