// The records MindFormers logs for a simulated job and each of its steps, in the logger's exact text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/sim/mindformers_simulator.hpp"
#include "core/sim/rotating_log.hpp"

namespace msmon {

// The simulated job's yaml, the values the plan and the records share (the data-skip and
// health-monitor thresholds).
inline constexpr double kSpikeThreshold = 3.0;        // global_norm_spike_threshold
inline constexpr int kSpikeCountThreshold = 2;        // global_norm_spike_count_threshold
inline constexpr double kEmbeddingThreshold = 270.0;  // CheckpointMonitor's embedding_local_norm_threshold
inline constexpr int kMicroBatches = 2;

// One parameter of the toy model: a two-layer llama split over the pipeline stages.
struct MfParam {
    std::string name;
    std::int64_t size;
    double grad_norm;  // L2 norm of its local gradient early in training
    bool monitored;    // TrainingStateMonitor target: local_norm/<name> is logged
};

// What one rank computes in one step.
struct MfRankStep {
    std::vector<float> sum_squares;  // per stage parameter (the wrapper's local_norm output)
    float embedding = 0;             // stage 0: the embedding's entry of sum_squares
    float device_local_norm = 0;
    float micro_loss[kMicroBatches] = {0, 0};
    float loss = 0;  // what MFLossMonitor prints: 0 off the last stage
    float device_accum_loss = 0;
    double load_balancing_loss = 0;          // MoE, last stage only
    float adam_m_norm = 0, adam_v_norm = 0;  // optimizer state of the first attention projection
    float weight_norm = 0;
    double throughput_linearity = 0;
    double save_seconds = 0;  // what a checkpoint saved at this step takes
};

// The rank's pipeline stage: 0 for the first half of the ranks, the last stage for the rest.
int stage_of(int rank, const MindFormersPlan& plan);

// Paths and names the records quote.
struct MfJobText {
    std::string launch_dir;   // realpath of OUTDIR: where msrun_launcher.sh ran
    std::string output_dir;   // <launch_dir>/output
    std::string logger_name;  // "mindformers" + absolute log dir
};

// The checkpoint a save at this step writes: sink mode names it by global step (<E>) and 1, non-sink by the
// real epoch and the step in it.
struct MfCheckpointName {
    std::int64_t epoch_part, step_part;
};

MfCheckpointName checkpoint_of(const MfPlannedStep& st, const MindFormersPlan& plan, MfLogVariant variant);

// "<prefix>_rank_<rank>[_<times>]-<epoch part>_<step part>.safetensors"; `times` counts the earlier launches
// that saved.
std::string checkpoint_file(int rank, int times, const MfCheckpointName& c);

// What one rank's step records depend on beyond the step itself.
struct MfStepContext {
    const MindFormersPlan& plan;
    MfLogVariant variant;
    double epoch_loss_mean;  // non-sink: mean of this rank's losses so far in the epoch
};

// What every launch logs before its first step.
std::vector<Record> startup_records(const MfJobText& job, const MindFormersPlan& plan);
// The job's config as MindFormers pprints it to stdout at start-up on ranks 0, 8, ... (base_trainer), the parts
// msmon reads: the data-skip and health-monitor thresholds.
std::string config_pprint(const MindFormersPlan& plan);

// MFLossMonitor: the wrapper's local-norm dump, the pipeline warning, the step line and the progress line.
std::vector<Record> step_records(const MfPlannedStep& st, const MfRankStep& rs, const std::vector<MfParam>& params,
                                 const MfStepContext& ctx);

// CheckpointMonitor's save lines (the health JSON is rewritten after the first).
std::vector<Record> save_records(const MfPlannedStep& st, const MindFormersPlan& plan, MfLogVariant v,
                                 const MfRankStep& rs);

// TrainingStateMonitor: metrics, embedding norm, data-skip check (in its on_train_step_end order).
std::vector<Record> monitor_records(const MfPlannedStep& st, int rank, const MfRankStep& rs,
                                    const std::vector<MfParam>& params, const MfStepContext& ctx);

// The trainer's last line after a run that was not stopped.
Record training_over_record();

// The uncaught ValueError that TrainingStateMonitor raises, as Python prints it to stderr (msrun: worker
// log).
std::string stop_traceback(const MfPlannedStep& st, const MfJobText& job);

}  // namespace msmon
