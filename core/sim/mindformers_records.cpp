// The records MindFormers logs for a simulated job and each step, with the caller each is logged from.
#include "core/sim/mindformers_records.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/sim/python_number_text.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

constexpr const char* kCkptPrefix = "llama3_1_8b";
constexpr double kFlopsPerNpuStep = 2.99e14;  // about 170.7 TFLOPS per NPU at 1752 ms

// Where MindFormers logs each record from.
constexpr const char* kCallback = "mindformers/core/callback/callback.py";
constexpr const char* kBaseTrainer = "mindformers/trainer/base_trainer.py";
constexpr Caller kRunMode{"mindformers/run_mindformer.py", 69, "main"};
constexpr Caller kSetOutput{"mindformers/utils/file_utils.py", 51, "set_output_path"};
constexpr Caller kTrainerInit{"mindformers/trainer/trainer.py", 333, "__init__"};
constexpr Caller kBuildDataset{kBaseTrainer, 1140, "training_process"};
constexpr Caller kDatasetSize{kBaseTrainer, 1144, "training_process"};
constexpr Caller kEpochsLine{"mindformers/trainer/utils.py", 222, "check_runner_config"};
constexpr Caller kBuildCallbacks{kBaseTrainer, 1297, "training_process"};
constexpr Caller kCompiling{kBaseTrainer, 1646, "training_process"};
constexpr Caller kStarting{kBaseTrainer, 1660, "training_process"};
constexpr Caller kTrainingOver{kBaseTrainer, 1689, "training_process"};
constexpr Caller kFlops{kCallback, 488, "_calculate_model_flops"};
constexpr Caller kLocalNormDump{kCallback, 247, "_get_loss_output"};
constexpr Caller kPipelineWarning{kCallback, 550, "_fix_loss_for_parallel"};
constexpr Caller kStepLine{kCallback, 747, "print_output_info"};
constexpr Caller kStepLineNoLr{kCallback, 756, "print_output_info"};
constexpr Caller kProgress{kCallback, 764, "print_output_info"};
constexpr Caller kFinishSaving{kCallback, 1781, "print_savetime"};
constexpr Caller kSaving{kCallback, 1870, "save_checkpoint"};
constexpr Caller kSaveBatch{kCallback, 1929, "save_checkpoint"};
constexpr Caller kSaveEpoch{kCallback, 1930, "save_checkpoint"};
constexpr Caller kSaveStep{kCallback, 1931, "save_checkpoint"};
constexpr Caller kSaveGlobalStep{kCallback, 1932, "save_checkpoint"};
constexpr Caller kEmbedding{kCallback, 1001, "on_train_step_end"};
constexpr Caller kTsm{kCallback, 1496, "_to_log"};
constexpr Caller kSkip{kCallback, 1060, "abnormal_global_norm_check"};
constexpr Caller kConsecutive{kCallback, 1064, "abnormal_global_norm_check"};

std::string python_tuple(const std::vector<MfParam>& params) {
    std::string out = "(";
    for (std::size_t i = 0; i < params.size(); ++i) out += (i ? ", " : "") + std::to_string(params[i].size);
    return out + (params.size() == 1 ? ",)" : ")");
}

}  // namespace

int stage_of(int rank, const MindFormersPlan& plan) {
    return rank < plan.ranks / plan.pipeline_stages ? 0 : plan.pipeline_stages - 1;
}

std::vector<Record> startup_records(const MfJobText& job, const MindFormersPlan& plan) {
    const auto flops = static_cast<long long>(kFlopsPerNpuStep * plan.ranks);
    return {{"INFO", kRunMode, "Running MindFormers in GRAPH_MODE."},
            {"INFO", kSetOutput, "set output path to '" + job.output_dir + "'"},
            {"INFO", kTrainerInit, "==========Trainer Init Success!=========="},
            {"INFO", kBuildDataset, ".........Build Dataset For Train.........."},
            {"INFO", kDatasetSize, "Create train dataset finish, dataset size:" + std::to_string(plan.steps_per_epoch)},
            {"INFO", kEpochsLine, "Will be Training epochs:" + std::to_string(plan.epochs) + ", sink_size:1"},
            {"INFO", kBuildCallbacks, ".........Build Callbacks For Train.........."},
            {"INFO", kCompiling, ".........Model Compiling, Please Wait a Moment..........."},
            {"INFO", kStarting, ".........Starting Training Model.........."},
            {"INFO", kFlops,
             "Full model flops is " + std::to_string(flops) + ", Shard model flops is " +
                 std::to_string(static_cast<long long>(kFlopsPerNpuStep)) + "."}};
}

std::string config_pprint(const MindFormersPlan& plan) {
    const auto number = [](double v) {  // Python's repr of a float that holds an integer: "3.0"
        return std::to_string(static_cast<long long>(v)) + ".0";
    };
    return "{'callbacks': [{'type': 'MFLossMonitor'},\n"
           "               {'checkpoint_format': 'safetensors',\n"
           "                'embedding_local_norm_threshold': " +
           number(kEmbeddingThreshold) +
           ",\n"
           "                'prefix': 'llama3_1_8b',\n"
           "                'type': 'CheckpointMonitor'}],\n"
           " 'monitor_config': {'global_norm_spike_count_threshold': " +
           std::to_string(kSpikeCountThreshold) +
           ",\n"
           "                    'global_norm_spike_threshold': " +
           number(kSpikeThreshold) +
           ",\n"
           "                    'monitor_on': True},\n"
           " 'parallel_config': {'pipeline_stage': " +
           std::to_string(plan.pipeline_stages) +
           "},\n"
           " 'run_mode': 'train',\n"
           " 'use_checkpoint_health_monitor': True,\n"
           " 'use_skip_data_by_global_norm': True}\n";
}

MfCheckpointName checkpoint_of(const MfPlannedStep& st, const MindFormersPlan& plan, MfLogVariant variant) {
    if (variant != MfLogVariant::nonsink) return {st.step, 1};
    return {(st.step - 1) / plan.steps_per_epoch + 1, (st.step - 1) % plan.steps_per_epoch + 1};
}

std::string checkpoint_file(int rank, int times, const MfCheckpointName& c) {
    return std::string(kCkptPrefix) + "_rank_" + std::to_string(rank) + (times > 0 ? "_" + std::to_string(times) : "") +
           "-" + std::to_string(c.epoch_part) + "_" + std::to_string(c.step_part) + ".safetensors";
}

std::vector<Record> step_records(const MfPlannedStep& st, const MfRankStep& rs, const std::vector<MfParam>& params,
                                 const MfStepContext& ctx) {
    const MindFormersPlan& plan = ctx.plan;
    const MfLogVariant v = ctx.variant;
    const std::int64_t S = plan.steps_per_epoch;
    const std::int64_t epoch = (st.step - 1) / S + 1, step_in_epoch = (st.step - 1) % S + 1;
    const bool old = v == MfLogVariant::old3;
    std::vector<Record> out;

    // MFLossMonitor: the wrapper's local-norm dump, the pipeline warning, the step line and the progress
    // line.
    out.push_back({"INFO", kLocalNormDump,
                   " norm_size: " + python_tuple(params) + "\nlocal_norm:\n" + np_array_scientific(rs.sum_squares)});
    if (plan.pipeline_stages > 1)
        out.push_back(
            {"WARNING", kPipelineWarning,
             "pipeline stages: " + std::to_string(plan.pipeline_stages) + " > 1, the loss on the last card is valid."});
    char head[96];
    std::snprintf(head, sizeof head, "{ Epoch:[%3lld/%3d], step:[%5lld/%5lld], ", static_cast<long long>(epoch),
                  plan.epochs, static_cast<long long>(step_in_epoch), static_cast<long long>(S));
    std::string line = head;
    const double loss = rs.loss;
    if (v == MfLogVariant::nonsink)
        line += "loss:[" + py_fixed(loss, 5, 6) + "/" + py_fixed(ctx.epoch_loss_mean, 5, 6) + "], ";
    else line += "loss: " + py_fixed(loss, 5, old ? 3 : 6) + ", ";
    if (v == MfLogVariant::moe) {
        const double lbl = rs.load_balancing_loss;
        line += "lm_loss: " + py_fixed(static_cast<float>(loss * 0.97), 5, 6) + ", ";
        if (lbl > 0) line += "load_balancing_loss: " + py_fixed(static_cast<float>(lbl), 5, 6) + ", ";
        line += "mtp_loss: " + py_fixed(static_cast<float>(loss * 1.05), 5, 6) + ", ";
    }
    line += "per_step_time: " + std::to_string(st.per_step_ms) + "ms, ";
    if (v != MfLogVariant::nolr) line += "lr: " + np_scalar(st.lr) + ", ";
    const bool overflow = !std::isfinite(st.global_norm);
    line += std::string("overflow cond: ") + (overflow ? "True" : "False") + ", loss_scale: 1.0, global_norm: ";
    line += v == MfLogVariant::noclip ? "None" : np_array1(st.global_norm);
    const double per_step_s = static_cast<double>(st.per_step_ms) / 1000.0;
    if (v == MfLogVariant::standard || v == MfLogVariant::nolr || v == MfLogVariant::noclip || v == MfLogVariant::moe)
        line += ", train_throughput_per_npu: " +
                printf_text("%.3f", kFlopsPerNpuStep / static_cast<double>(st.per_step_ms) / 1e9) + "T";
    out.push_back({"INFO", v == MfLogVariant::nolr ? kStepLineNoLr : kStepLine, line});

    const double total = static_cast<double>(plan.epochs * S);
    const double percent = static_cast<double>(st.step) / total * 100.0;
    const int bars = static_cast<int>(50 * percent / 100);
    std::string bar;
    for (int i = 0; i < bars; ++i) bar += "\u2588";
    bar += std::string(static_cast<std::size_t>(50 - std::min(bars, 50)), ' ');
    const int dp = plan.ranks / plan.pipeline_stages;
    const double samples = static_cast<double>(dp * kMicroBatches) / plan.ranks / per_step_s;
    const auto remain = static_cast<std::int64_t>((total - static_cast<double>(st.step)) * per_step_s);
    out.push_back({"INFO", kProgress,
                   "  " + printf_text("%4.1f", percent) + "% |" + bar + "| " + printf_text("%.5f", samples) +
                       " samples/s/p  " + timedelta_text(remain) + " }"});
    return out;
}

// CheckpointMonitor's save lines (the health JSON is rewritten after the first).
std::vector<Record> save_records(const MfPlannedStep& st, const MindFormersPlan& plan, MfLogVariant v,
                                 const MfRankStep& rs) {
    const MfCheckpointName c = checkpoint_of(st, plan, v);
    const std::int64_t epoch_num = v == MfLogVariant::nonsink ? c.epoch_part : st.step;
    const double seconds = rs.save_seconds;
    std::vector<Record> out;
    out.push_back({"INFO", kSaving, "......Saving ckpt......", true});
    out.push_back({"INFO", kSaveBatch,
                   "global_batch_size: " + std::to_string(plan.ranks / plan.pipeline_stages * kMicroBatches)});
    out.push_back({"INFO", kSaveEpoch, "epoch_num: " + std::to_string(epoch_num)});
    out.push_back({"INFO", kSaveStep, "step_num: " + std::to_string(st.step)});
    out.push_back({"INFO", kSaveGlobalStep, "global_step: " + std::to_string(st.opt_step)});
    out.push_back({"INFO", kFinishSaving,
                   "Finish saving ckpt of epoch " + std::to_string(c.epoch_part) + " step " +
                       std::to_string(c.step_part) + " using " + printf_text("%.3f", seconds) + " seconds"});
    return out;
}

// TrainingStateMonitor: metrics, embedding norm, data-skip check (in its on_train_step_end order).
std::vector<Record> monitor_records(const MfPlannedStep& st, int rank, const MfRankStep& rs,
                                    const std::vector<MfParam>& params, const MfStepContext& ctx) {
    const MindFormersPlan& plan = ctx.plan;
    const bool last_stage = stage_of(rank, plan) == plan.pipeline_stages - 1;
    const bool old = ctx.variant == MfLogVariant::old3;
    const std::int64_t S = plan.steps_per_epoch;
    char head[80];
    std::snprintf(head, sizeof head, "Epoch:[%3lld/%3d], step:[%5lld/%5lld] ",
                  static_cast<long long>((st.step - 1) / S + 1), plan.epochs,
                  static_cast<long long>((st.step - 1) % S + 1), static_cast<long long>(S));
    std::vector<Record> out;
    // r1.8+ logs "%s" of the value (numpy or Python text); r1.5-r1.7 logged "%.4f".
    auto tsm = [&](const std::string& tag, const std::string& text, double value) {
        out.push_back({"INFO", kTsm, head + tag + ": " + (old ? py_fixed(value, 0, 4) : text)});
    };
    std::string optimizer_param;  // the optimizer state is logged for the first attention projection
    for (std::size_t i = 0; i < params.size(); ++i) {
        if (!params[i].monitored) continue;
        if (optimizer_param.empty() && params[i].name.find("attention.wq") != std::string::npos)
            optimizer_param = params[i].name;
        const float norm = std::sqrt(rs.sum_squares[i]);
        tsm("local_norm/" + params[i].name, np_scalar(norm), norm);
    }
    tsm("device_local_norm", np_scalar(rs.device_local_norm), rs.device_local_norm);
    if (last_stage)
        for (float micro : rs.micro_loss) tsm("micro_local_lm_loss", np_array1(micro), micro);
    if (!optimizer_param.empty()) {
        tsm("adam_m_norm/" + optimizer_param, python_float_repr(rs.adam_m_norm), rs.adam_m_norm);
        tsm("adam_v_norm/" + optimizer_param, python_float_repr(rs.adam_v_norm), rs.adam_v_norm);
    }
    tsm("weight_norm", python_float_repr(rs.weight_norm), rs.weight_norm);
    tsm("throughput_linearity", python_float_repr(rs.throughput_linearity), rs.throughput_linearity);
    if (last_stage) tsm("device_accum_local_lm_loss", np_scalar(rs.device_accum_loss), rs.device_accum_loss);

    out.push_back(
        {"INFO", kEmbedding,
         "embedding_local_norm: " + (stage_of(rank, plan) == 0 ? np_scalar(rs.embedding) : std::string("0"))});
    if (st.skipped) {
        out.push_back({"INFO", kSkip,
                       "opt_global_step: " + std::to_string(st.opt_step) + ", skip_data_grad_norm_threshold: " +
                           python_float_repr(kSpikeThreshold) + ", is_skip: [ True]"});
        if (!st.stop && st.spike_count < kSpikeCountThreshold)
            out.push_back({"INFO", kConsecutive,
                           "Current global norm " + np_array1(st.global_norm) + " of step " + std::to_string(st.step) +
                               " has been " + std::to_string(st.spike_count) +
                               " consecutive times greater than threshold: " + python_float_repr(kSpikeThreshold)});
    }
    return out;
}

// The uncaught ValueError that TrainingStateMonitor raises, as Python prints it to stderr (msrun: worker
// log).
std::string stop_traceback(const MfPlannedStep& st, const MfJobText& job) {
    const std::string mf = job.launch_dir + "/mindformers/",
                      ms = "/usr/local/python3.11/lib/python3.11/site-packages/mindspore/";
    std::string t = "Traceback (most recent call last):\n";
    auto frame = [&](const std::string& file, int line, const char* func, const char* code) {
        t += "  File \"" + file + "\", line " + std::to_string(line) + ", in " + func + "\n    " + code + "\n";
    };
    frame(job.launch_dir + "/run_mindformer.py", 354, "<module>", "main(config_)");
    frame(mf + "tools/cloud_adapter/cloud_monitor.py", 44, "wrapper", "raise exc");
    frame(mf + "tools/cloud_adapter/cloud_monitor.py", 34, "wrapper", "result = run_func(*args, **kwargs)");
    frame(job.launch_dir + "/run_mindformer.py", 46, "main", "trainer.train()");
    frame(mf + "trainer/trainer.py", 531, "train", "self.trainer.train(");
    frame(mf + "trainer/causal_language_modeling/causal_language_modeling.py", 115, "train", "self.training_process(");
    frame(mf + "trainer/base_trainer.py", 1679, "training_process",
          "model.train(config.runner_config.epochs, dataset,");
    frame(ms + "train/model.py", 1121, "train", "self._train(epoch,");
    frame(ms + "train/model.py", 117, "wrapper", "func(self, *args, **kwargs)");
    frame(ms + "train/model.py", 681, "_train",
          "self._train_dataset_sink_process(epoch, train_dataset, list_callback,");
    frame(ms + "train/model.py", 776, "_train_dataset_sink_process", "list_callback.on_train_step_end(run_context)");
    frame(ms + "train/callback/_callback.py", 440, "on_train_step_end", "cb.on_train_step_end(run_context)");
    frame(mf + "core/callback/callback.py", 1003, "on_train_step_end", "self.abnormal_global_norm_check(cb_params)");
    frame(mf + "core/callback/callback.py", 1069, "abnormal_global_norm_check", "raise ValueError(");
    return t + "ValueError: Current global norm " + np_array1(st.global_norm) + " of step " + std::to_string(st.step) +
           " has been " + std::to_string(kSpikeCountThreshold) + " consecutive times greater than threshold " +
           python_float_repr(kSpikeThreshold) + ", stop training...\n";
}

Record training_over_record() {
    return {"INFO", kTrainingOver, ".........Training Over!............."};
}

}  // namespace msmon
