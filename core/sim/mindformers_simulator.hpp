// Writes what a MindFormers (MindSpore Transformers) job writes beside msprobe's output, in the exact formats
// of the spec (mindformers-format.md): per-rank info.log with rotation, msrun worker logs, health_ckpts.json.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sim/fault_plan.hpp"
#include "core/sim/msprobe_simulator.hpp"

namespace msmon {

// Which MFLossMonitor step-line shape to write (sink or not, with or without lr and clipping, MoE, old).
enum class MfLogVariant {
    standard,  // sink mode, lr, global_norm [x], throughput
    nonsink,   // loss:[cur/epoch mean], no throughput; checkpoints named by real epoch and step
    nolr,      // the "lr: ..." segment is missing
    noclip,    // global_norm: None
    moe,       // lm_loss, load_balancing_loss, mtp_loss
    old3,      // r1.6: loss %5.3f, no throughput, TrainingStateMonitor values %.4f
};
std::optional<MfLogVariant> parse_mf_log_variant(std::string_view name);
inline constexpr std::string_view kMfLogVariantNames = "standard|nonsink|nolr|noclip|moe|old3";

struct MindFormersOptions {
    bool logs = true;     // info.log and worker logs
    bool health = false;  // rank 0's health_ckpts.json
    std::int64_t ckpt_every = 10;
    std::int64_t log_max_bytes = 50LL * 1024 * 1024;  // RotatingFileHandler maxBytes; 0: never rotate
    MfLogVariant variant = MfLogVariant::standard;
    // The job dies after this step and is relaunched from its last checkpoint: it resumes at the step after that
    // checkpoint's (the first step if none was saved yet), so the steps in between are trained twice.
    std::int64_t restart_at = -1;
    // TrainingStateMonitor's data skip: two consecutive global norms >= 3.0 raise the ValueError that ends
    // the job. Off, only stop@ faults end it (msprobe output alone stays as it always was).
    bool stop_on_spikes = true;
    // TensorBoard (tensorboard_dir = output/tensorboard): MFLossMonitor and TrainingStateMonitor scalars, the
    // config as text, and TopkBiasBalanceCallback's expert_load for `moe_layers` × `moe_experts`.
    bool tensorboard = false;
    int moe_layers = 2, moe_experts = 8;
    // Routing collapse planted from this step on: expert `collapse_expert` of layer `collapse_layer` takes most
    // of the layer's tokens. -1: none.
    std::int64_t collapse_step = -1;
    int collapse_layer = 1, collapse_expert = 3;
};

// One training step as every rank sees it.
struct MfPlannedStep {
    std::int64_t step = 0;  // global step, 1-based like MindFormers (the same number as msprobe's step)
    int launch = 0;         // 0 for the first process, +1 per restart
    bool first_of_launch = false;
    double spike = 1;            // gradient factor from spike faults (and the spikes a stop implies)
    std::vector<int> nan_ranks;  // ranks with a NaN gradient; -1: all
    float global_norm = 0;
    double loss = 0;  // the last stage's loss before per-rank noise
    float lr = 0;
    std::int64_t opt_step = 0;  // optimizer updates applied after this step (skipped updates do not count)
    bool skipped = false;       // global norm >= threshold: the data-skip lines are logged
    int spike_count = 0;        // consecutive skipped steps so far in this launch
    bool stop = false;          // the ValueError ends the job after this step's skip line
    bool restart_after = false;
    bool save = false;  // a checkpoint is saved at this step
    std::int64_t per_step_ms = 0;
    bool nan_on(int rank) const;
};

// The job decided before anything is written, so msprobe's output can end where the job ends.
struct MindFormersPlan {
    int ranks = 1;
    int pipeline_stages = 1;  // 2 when ranks >= 2: the first half of the ranks is stage 0
    int epochs = 2;
    std::int64_t steps_per_epoch = 1;
    std::int64_t first_step = 1, last_step = 1;  // global steps the run would cover without a stop
    std::int64_t stop_step = -1;                 // where the job ends early, or -1
    std::vector<Fault> implied_spikes;           // spikes that a stop@ fault implies, for msprobe's output too
    // Inputs of the step sequence.
    std::uint64_t seed = 1;
    std::map<std::int64_t, double> spikes;
    std::map<std::int64_t, std::vector<int>> nans;
    std::map<std::int64_t, double> lr_factors;  // lr@: from this step on, the learning rate ×
    std::int64_t stop_fault = -1;
    std::int64_t restart_at = -1;
    std::int64_t restart_resume = -1;  // the step the relaunch resumes at
    std::int64_t ckpt_every = 10;
    std::int64_t warmup = 1;
    double base_ms = 1752;
    bool stop_on_spikes = true;
};

MindFormersPlan plan_mindformers_run(const SimOptions& sim, const MindFormersOptions& mf);

// The plan's steps one at a time (a long run is never held in memory).
class MfStepSequence {
public:
    explicit MfStepSequence(const MindFormersPlan& plan);
    std::optional<MfPlannedStep> next();

private:
    const MindFormersPlan& plan_;
    std::int64_t step_;
    std::int64_t opt_;
    std::int64_t reached_ = -1;        // the furthest step trained: faults act the first time a step is
    std::int64_t opt_at_resume_ = -1;  // optimizer updates in the checkpoint the relaunch loads
    int launch_ = 0, count_ = 0;
    bool first_of_launch_ = true, done_ = false;
};

// The msprobe simulator's options for the same job: stop@ faults removed, the spikes they imply added, the
// relaunch (restart_at) as a restart resuming where MindFormers resumes, and the run cut where the job stops.
SimOptions msprobe_options_for(const SimOptions& sim, const MindFormersPlan& plan);

struct MindFormersResult {
    std::int64_t steps = 0;
    std::int64_t lines = 0;
    std::int64_t bytes = 0;
    std::int64_t rotations = 0;
    std::int64_t checkpoints = 0;
    int launches = 0;
    bool stopped = false;  // ended by the consecutive-spike ValueError
};

// Writes the plan under <sim.outdir>/output; returns early (with what was written) when `stop` becomes true.
bool run_mindformers_simulation(const SimOptions& sim, const MindFormersOptions& mf, const MindFormersPlan& plan,
                                const std::atomic<bool>& stop, MindFormersResult& result, std::string& error);

}  // namespace msmon
