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
// - The weights: an update moves a weight's norm by its update ratio (5e-4..5e-3 of it early, falling with the
//   gradients to ~40%, a third of noise per step: never the 10× an optimizer-wide change makes), mostly upwards
//   and settling where weight decay would hold it. param_origin is the previous step's param_updated, exactly.
// - Tensor parallelism (tp > 1): each shard of a matrix has its own mean gradient, Adam state and weights (noise
//   drawn with the shard's own seed; gradient scales kShardStep apart), and its replicas are the ranks holding
//   it; LayerNorm weights are held whole on every rank. Shard 0 draws with the run's seed: tp 1 is the same run.
// Faults, as the real nan, baddata, sdc-weight, sdc-grad, lr-blowup and dead-layer runs show them (FAULT.txt there):
// - nan: the module's output gets nans 0 → 1; modules computed from it follow on that rank and micro-step, the
//   count growing as norms and linears spread it across a row and attention across the sequence; every
//   activation gradient and weight gradient of that rank; grad_reduced on every rank; everything from the next
//   step on, every rank (the batch rows stay finite).
// - baddata ×F: the batch ×F, the residual stream ×~0.9F decaying ×0.87 per layer, LayerNorm outputs unchanged;
//   that rank's activation gradients ×~2/F (a LayerNorm's own input path ×~2/F·1.5/F), its block weight
//   gradients ×~2/F; grad_reduced moves on every rank through the mean; the next step is normal.
// - spike ×F: a rank's (or every rank's) weight and activation gradients ×F; grad_reduced follows through the mean.
// - drift ×F: one module's output and its weight gradients grow geometrically, to ×F at the last step.
// - sdc ×F: one rank's copy of a weight ×F as the step begins; it trains on with its replicas' updates (the
//   all-reduce keeps its gradient and Adam's moments theirs), its param_origin and param_updated apart for good.
// - sdcgrad ×F: one rank's all-reduced gradient of a weight ×F; that rank's Adam moments take it in, and its
//   update (Adam's step m̂/√v̂ against the replicas') and its weights depart from then on; its moments rejoin the
//   replicas' once they print the same (their difference decays by β1 a step).
// - lr ×F: every weight's update ratio ×F from the step on, on every rank.
// - dead: the module's output is exact zeros on every rank, and so is what is computed from it alone; no gradient
//   flows back through it (dead_module.hpp); weights without a gradient drift to a stop as Adam's moment decays.
// A fault changes nothing else: every draw is keyed by what it is for, so a run with a fault and the same seed
// without it differ only where the fault acts.
#include "core/sim/simulated_training.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/sim/keyed_noise.hpp"
#include "core/sim/weight_model.hpp"

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
    kShardNoise,
};

constexpr double kNoiseToSignal = 3.6;       // a rank's batch noise against the mean gradient
constexpr double kSignalCorrelation = 0.25;  // of the mean gradient from one step to the next
constexpr double kRankScaleSigma = 0.12;     // the shared per-rank, per-step loss scale (log)
constexpr double kOwnSigmaVector = 0.23, kOwnSigmaMatrix = 0.08;
constexpr double kCommonSigmaVector = 0.17, kCommonSigmaMatrix = 0.09;  // a step's magnitude for every rank (log)
constexpr double kSignalSigmaVector = 0.5, kSignalSigmaMatrix = 0.26;   // the mean gradient's length, per step (log)
constexpr int kDimsVector = 6, kDimsMatrix = 28;
constexpr double kShardStep = 0.25;  // between tensor-parallel shards' gradient scales (log)
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

SimulatedTraining::SimulatedTraining(const SimModel& model, int first_rank, int ranks, int tp, bool activations,
                                     int micro_steps, std::uint64_t seed)
    : model_(model),
      first_rank_(first_rank),
      ranks_(ranks),
      tp_(std::max(1, tp)),
      micro_steps_(std::max(1, micro_steps)),
      activations_(activations),
      seed_(seed) {
    const auto& params = model.params();
    for (std::size_t p = 0; p < params.size(); ++p)
        dims_.push_back(
            static_cast<int>(std::min<double>(params[p].numel, params[p].vector ? kDimsVector : kDimsMatrix)));
    for (int s = 0; s < tp_; ++s)
        for (std::size_t p = 0; p < params.size(); ++p) {
            const auto dims = static_cast<std::size_t>(dims_[p]);
            std::vector<double> signal(dims);
            KeyedNoise noise(shard_seed(s), {kSignalNoise, static_cast<std::int64_t>(p), -1, 0});
            for (double& c : signal) c = noise.gauss();
            state_.signal.push_back(std::move(signal));
            state_.m.emplace_back(dims, 0.0);
            state_.v.emplace_back(dims, 0.0);
            state_.weight.push_back(params[p].weight_norm);
        }
    state_.weight_stats.resize(state_.weight.size());
    // Shards of one weight see gradients of the same order, not the same size (other heads, other features):
    // kShardStep apart in a shuffled order, so that no two shards print the same statistics even where
    // msprobe's decimals leave one or two digits (Adam's second moment), which would make them look like replicas.
    shard_scale_.assign(state_.weight.size(), 1.0);
    std::vector<int> order(static_cast<std::size_t>(tp_));
    for (std::size_t p = 0; p < params.size(); ++p) {
        for (int s = 0; s < tp_; ++s) order[static_cast<std::size_t>(s)] = s;
        KeyedNoise noise(seed, {kShardNoise, static_cast<std::int64_t>(p)});
        for (int s = tp_ - 1; s > 0; --s)
            std::swap(order[static_cast<std::size_t>(s)],
                      order[static_cast<std::size_t>(std::min<double>(s, noise.uniform() * (s + 1)))]);
        if (params[p].vector) continue;  // held whole: one copy, no shards
        for (int s = 0; s < tp_; ++s)
            shard_scale_[at(s, static_cast<int>(p))] =
                std::exp(kShardStep * (order[static_cast<std::size_t>(s)] - (tp_ - 1) / 2.0));
    }
    members_.resize(static_cast<std::size_t>(tp_) + 1);  // the last: every rank (weights held whole)
    for (int r = 0; r < ranks; ++r) {
        members_[static_cast<std::size_t>(shard_of(r))].push_back(r);
        members_.back().push_back(r);
    }
    unreduced_.resize(params.size() * static_cast<std::size_t>(ranks));
    for (auto* v : {&reduced_, &exp_avg_, &exp_avg_sq_, &origin_, &updated_}) v->resize(state_.weight.size());
    rank_scale_.resize(static_cast<std::size_t>(ranks));
    const std::size_t slots = static_cast<std::size_t>(ranks) * static_cast<std::size_t>(micro_steps_);
    nan_module_.assign(slots, -1);
    clean_output_.resize(slots);
    alive_output_.resize(slots);
    if (activations_) {
        actv_.resize(slots * model.values().size());
        actv_grad_.resize(slots * model.grads().size());
    }
}

std::uint64_t SimulatedTraining::shard_seed(int shard) const {
    return shard == 0 ? seed_ : mix64(seed_ ^ (0x7368617264000000ull + static_cast<std::uint64_t>(shard)));  // "shard"
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
    if (faults.dead_module != dead_.module)
        dead_ = faults.dead_module >= 0 ? dead_path(model_, faults.dead_module) : DeadPath{};
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
    own_rows_.clear();
    std::vector<double> g, sum, healthy;
    for (int s = 0; s < tp_; ++s) {
        const std::uint64_t seed = shard_seed(s);
        for (std::size_t p = 0; p < params.size(); ++p) {
            const SimParam& par = params[p];
            if (par.vector && s > 0) continue;  // held whole on every rank: shard 0's
            const auto& members = members_[static_cast<std::size_t>(par.vector ? tp_ : s)];
            if (members.empty()) continue;  // a shard this node holds no replica of
            const double replicas = static_cast<double>(members.size());
            const std::size_t sp = at(s, static_cast<int>(p));
            const int k = dims_[p];
            const double elem = par.grad_norm * shard_scale_[sp] * trend / std::sqrt(par.numel);
            double drift = 1;
            for (const auto& [module, factor] : faults.drift)
                if (module == par.module) drift *= factor;
            const bool dead = dead_.module >= 0 && dead_.zero_params[p];
            // The mean gradient turns a little each step; its length varies as a norm of k normals, bounded.
            auto& signal = state_.signal[sp];
            KeyedNoise sn(seed, {kSignalNoise, static_cast<std::int64_t>(p), step, launch});
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
            for (int r : members) {
                const auto& rf = faults.ranks[static_cast<std::size_t>(r)];
                StatRow& out = unreduced_[static_cast<std::size_t>(r) * params.size() + p];
                if (state_.poisoned || rf.nan_module >= 0) {
                    out = nan_row(par.numel);
                    any_nan = true;
                    continue;
                }
                KeyedNoise rn(seed_, {kGradNoise, static_cast<std::int64_t>(p), first_rank_ + r, step, launch});
                // The batch noise: a direction across the mean gradient's, and a length that varies as a norm of k
                // normals does (log σ 1/√(2k)) and as the tensor's own share of the batch (own σ), bounded so that
                // a healthy norm never leaves the real run's range however long the run.
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
                // A dead module's weights get no gradient at all: exact zeros, as msprobe counts them.
                const double factor = dead ? 0.0 : rf.grad_factor * param_batch_factor(par, rf.batch_factor) * drift;
                for (int i = 0; i < k; ++i) {
                    double& x = g[static_cast<std::size_t>(i)];
                    x = elem * mix * (signal[static_cast<std::size_t>(i)] + kNoiseToSignal * length * x);
                    healthy[static_cast<std::size_t>(i)] += x;
                    x *= factor;
                    sum[static_cast<std::size_t>(i)] += x;
                }
                out = vector_stats(g.data(), k, par.numel, false);
            }
            auto& m = state_.m[sp];
            auto& v = state_.v[sp];
            if (any_nan) {
                reduced_[sp] = nan_row(par.numel);
                std::fill(sum.begin(), sum.end(), std::numeric_limits<double>::quiet_NaN());
                poison_next = true;
            } else {
                // The mean, its length kept within the bound too: averaging a few ranks' noise in few dimensions
                // could cancel it to far less than the real run ever shows.
                double healthy_sq = 0;
                for (double x : healthy) healthy_sq += x * x;
                const double typical =
                    elem * mix * replicas * std::sqrt(k * (1 + kNoiseToSignal * kNoiseToSignal / replicas));
                const double natural = std::sqrt(healthy_sq) / typical;
                const double keep = natural > 0 ? std::exp(soft_bound(std::log(natural), bound)) / natural : 1.0;
                for (double& x : sum) x *= keep / replicas;
                reduced_[sp] = vector_stats(sum.data(), k, par.numel, false);
            }
            // Adam's state as msprobe reads it: before this step's update.
            if (had_state_) {
                exp_avg_[sp] = vector_stats(m.data(), k, par.numel, false);
                exp_avg_sq_[sp] = vector_stats(v.data(), k, par.numel, true);
            }
            // The weights: the same on every replica; a NaN update poisons them.
            double& w = state_.weight[sp];
            KeyedNoise wn(seed, {kWeightNoise, static_cast<std::int64_t>(p), step, launch});
            // Drawn even when replaced below: the noise that follows stays the same.
            origin_[sp] = weight_stats(par, w, WeightDraws::draw(wn));
            if (state_.updates > 0) origin_[sp] = state_.weight_stats[sp];
            // Copies planted now start from the replicas' state as this step begins (Adam's before its update).
            for (const auto& c : faults.corruptions)
                if (c.param == static_cast<int>(p) && shard_of(c.rank, c.param) == s)
                    corrupt_copy(c, w, origin_[sp], m, v);
            // What the replicas' copy does this step, for the ranks with a copy of their own.
            SharedStep shared;
            shared.shard = s;
            shared.param = static_cast<int>(p);
            shared.sum = &sum;
            shared.u = adam_step_rms(m, v, sum, state_.updates + 1);
            shared.before = w;
            shared.nan = any_nan;
            for (const auto& c : state_.copies)
                if (c.param == static_cast<int>(p) && shard_of(c.rank, c.param) == s) {
                    shared.m = m;  // before the update: a copy whose moments rejoin takes them from here
                    shared.v = v;
                    break;
                }
            for (int i = 0; i < k; ++i) {
                const double x = sum[static_cast<std::size_t>(i)];
                m[static_cast<std::size_t>(i)] = kBeta1 * m[static_cast<std::size_t>(i)] + (1 - kBeta1) * x;
                v[static_cast<std::size_t>(i)] = kBeta2 * v[static_cast<std::size_t>(i)] + (1 - kBeta2) * x * x;
            }
            // How far this step moves the weight's norm (the update ratio msprobe's norms show): the parameter's
            // own scale, falling as training settles, × the learning rate's factor. A dead module's weights drift
            // to a stop as Adam's first moment decays.
            const double pace =
                par.update_ratio * trend * faults.lr_factor * (dead ? adam_decay(faults.dead_for + 1) : 1.0);
            shared.norm = norm_step(pace, std::log(w / par.weight_norm), wn);
            shared.draws = WeightDraws::draw(wn);
            w = any_nan ? std::numeric_limits<double>::quiet_NaN() : w * (1 + shared.norm.sign * shared.norm.ratio);
            shared.after = w;
            updated_[sp] = weight_stats(par, w, shared.draws);
            state_.weight_stats[sp] = updated_[sp];
            step_own_copies(shared, faults);
        }
    }
    ++state_.updates;
    state_.poisoned = poison_next;
}

void SimulatedTraining::corrupt_copy(const StepFaults::Corruption& c, double weight, const StatRow& origin,
                                     const std::vector<double>& m, const std::vector<double>& v) {
    OwnCopy* copy = nullptr;
    for (auto& own : state_.copies)
        if (own.rank == c.rank && own.param == c.param) copy = &own;
    if (!copy) {
        state_.copies.push_back(OwnCopy{c.rank, c.param, false, {}, {}, weight, origin});
        copy = &state_.copies.back();
    }
    if (c.gradient) {
        if (!copy->own_moments) {
            copy->own_moments = true;
            copy->m = m;
            copy->v = v;
        }
        return;
    }
    // The weights in memory ×factor after the last update: every statistic of the tensor scales with it.
    copy->weight *= c.factor;
    for (double* x : {&copy->stats.min, &copy->stats.max, &copy->stats.norm, &copy->stats.mean}) *x *= c.factor;
}

void SimulatedTraining::step_own_copies(const SharedStep& shared, const StepFaults& faults) {
    const SimParam& par = model_.params()[static_cast<std::size_t>(shared.param)];
    const std::size_t sp = at(shared.shard, shared.param);
    const std::size_t k = shared.sum->size();
    std::vector<double> sum;
    for (auto& c : state_.copies) {
        if (c.param != shared.param || shard_of(c.rank, c.param) != shared.shard) continue;
        OwnRows rows{c.rank, c.param, reduced_[sp], exp_avg_[sp], exp_avg_sq_[sp], c.stats, {}};
        if (!c.own_moments) {
            c.weight += shared.after - shared.before;  // the replicas' update, added to its own weights
        } else {
            double f = 1;
            for (const auto& cr : faults.corruptions)
                if (cr.gradient && cr.rank == c.rank && cr.param == c.param) f *= cr.factor;
            sum = *shared.sum;
            for (double& x : sum) x *= f;
            if (f != 1) rows.grad_reduced = vector_stats(sum.data(), static_cast<int>(k), par.numel, false);
            if (had_state_) {
                // Moments that print as the replicas' are theirs from now on: the difference left is below what
                // msprobe prints, and the same gradients only shrink it. (Kept apart, it would show again wherever
                // rounding fell the other way.)
                const StatRow own_m = vector_stats(c.m.data(), static_cast<int>(k), par.numel, false);
                const StatRow own_v = vector_stats(c.v.data(), static_cast<int>(k), par.numel, true);
                if (prints_same(own_m, exp_avg_[sp], printed_digits_)) c.m = shared.m;
                else rows.exp_avg = own_m;
                if (prints_same(own_v, exp_avg_sq_[sp], printed_digits_)) c.v = shared.v;
                else rows.exp_avg_sq = own_v;
            }
            // Adam's step on this copy against the replicas': its moments, so its update.
            const double u = adam_step_rms(c.m, c.v, sum, state_.updates + 1);
            const double ratio = shared.norm.ratio * (shared.u > 0 ? u / shared.u : 1.0);
            for (std::size_t i = 0; i < k; ++i) {
                c.m[i] = kBeta1 * c.m[i] + (1 - kBeta1) * sum[i];
                c.v[i] = kBeta2 * c.v[i] + (1 - kBeta2) * sum[i] * sum[i];
            }
            c.weight =
                shared.nan ? std::numeric_limits<double>::quiet_NaN() : c.weight * (1 + shared.norm.sign * ratio);
        }
        c.stats = weight_stats(par, c.weight, shared.draws);
        rows.updated = c.stats;
        own_rows_.push_back(std::move(rows));
    }
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
                if (dead_.module >= 0 && dead_.zero_values[i]) {
                    if (static_cast<int>(i) == dead_.value) alive_output_[at] = actv[i];
                    actv[i] = kZeroRow;
                }
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
                if (dead_.module >= 0 && dead_.zero_grads[i]) agrad[i] = kZeroRow;
                if (state_.poisoned) agrad[i] = nan_row(g.rows * g.width);
                else if (nan_module >= 0) agrad[i] = nan_row(std::max(1.0, nan_rows) * g.width);
            }
        }
    }
}

}  // namespace msmon
