// MindFormers log lines: the two logger prefixes, and every message this
// tool reads — per-step loss lines, TrainingStateMonitor metrics, data-skip, embedding norm, checkpoint saves.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace msmon {

enum class LogPrefix { file_sink, stdout_sink, mindspore, none };

struct LogLineHead {
    LogPrefix prefix = LogPrefix::none;
    std::string_view level;    // INFO, WARNING, ...
    std::string_view time;     // "2026-07-24 10:05:53,818" (MindSpore's own format for mindspore lines)
    std::string_view message;  // the rest, untrimmed
};

// Splits a physical line into prefix fields and message. `none` for continuation lines and raw output.
LogLineHead parse_log_head(std::string_view line);

// "{ Epoch:[e/E], step:[s/S], loss: ..." (MFLossMonitor) or "{ step:[s/S], ..." (PyNative trainer).
struct StepLine {
    std::int64_t epoch = 0, epochs = 0, step_in_epoch = 0, steps_per_epoch = 0;
    std::int64_t global_step = 0;           // (epoch-1)*steps_per_epoch + step_in_epoch; PyNative: the step itself
    std::optional<double> loss;             // absent for PyNative "loss: N/A (non-last PP stage ...)"
    std::optional<double> loss_epoch_mean;  // non-sink mode "loss:[cur/mean]"
    std::optional<double> lm_loss, load_balancing_loss, mtp_loss, indexer_loss;
    std::vector<std::pair<std::string, double>> extra_losses;  // PyNative mtp_<k>_loss
    std::optional<double> per_step_ms;
    std::optional<double> lr;
    std::optional<bool> overflow;
    std::optional<double> loss_scale;   // absent for "unavailable"
    std::optional<double> global_norm;  // absent for "None"
    std::optional<double> throughput_tflops;
};
std::optional<StepLine> parse_step_line(std::string_view message);

// A log line's time, "2026-07-24 10:05:53,818" (or with '.' before the ms, or none), read as the node's local time:
// ms since the epoch; nullopt when it is not that shape.
std::optional<std::int64_t> log_time_ms(std::string_view time);

// "Epoch:[e/E], step:[s/S] <tag>: <value>" (TrainingStateMonitor._to_log).
struct TsmLine {
    std::int64_t global_step = 0;
    std::string tag;
    std::vector<double> values;  // "0.0187", "[7.135756]", "[12.5, 13.25]"
};
std::optional<TsmLine> parse_tsm_line(std::string_view message);

// A TrainingStateMonitor tag as msmon's (kind, name): "local_norm/<param>" → (local_norm, param);
// "micro_local_lm_loss" and "local_lm_loss" → (local_loss, lm); "device_accum_local_lm_loss" →
// (device_accum_local_loss, lm); "weight_norm" → (weight_norm, ""). The log and TensorBoard readers share it.
std::pair<std::string, std::string> tsm_series(const std::string& tag);

// "opt_global_step: 0, skip_data_grad_norm_threshold: 3.0, is_skip: [ True]"
struct SkipLine {
    std::int64_t opt_global_step = 0;
    double threshold = 0;
    bool is_skip = false;
};
std::optional<SkipLine> parse_skip_line(std::string_view message);

// "Current global norm [x] of step N has been K consecutive times greater than threshold: T" (INFO), and the
// "..., stop training..." ValueError that ends the job.
struct SpikeLine {
    double global_norm = 0;
    std::int64_t step = 0;
    std::int64_t count = 0;
    double threshold = 0;
    bool stop = false;
};
std::optional<SpikeLine> parse_spike_line(std::string_view message);

// "embedding_local_norm: 251.79117"
std::optional<double> parse_embedding_line(std::string_view message);

// "pipeline stages: 2 > 1, the loss on the last card is valid." and the zero-bubble/interleave variants:
// the next step line's loss is not this rank's real loss when it is 0.
bool is_partial_loss_warning(std::string_view message);

// "Traceback (most recent call last):" and the exception line that ends it ("ValueError: ...").
bool is_traceback_start(std::string_view line);
bool is_exception_line(std::string_view line);

// "1.5", "[1.5]", "[nan]", "inf", "1.e-05": a number with optional brackets; nullopt for None/text.
std::optional<double> parse_log_number(std::string_view text);

}  // namespace msmon
