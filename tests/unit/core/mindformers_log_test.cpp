// Unit tests for core/parse/mindformers_log: the two logger prefixes and MindSpore's, every step-line variant
// (MFLossMonitor, PyNative trainer), TrainingStateMonitor lines, data skip, embedding norm.
// The rendered fixtures are in mindformers_log_fixture_test.cpp.
#include "core/parse/mindformers_log.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/test_env.hpp"

namespace msmon {
namespace {

StepLine step_ok(std::string_view message) {
    auto s = parse_step_line(message);
    EXPECT_TRUE(s.has_value()) << "not a step line: " << message;
    return s.value_or(StepLine{});
}

TsmLine tsm_ok(std::string_view message) {
    auto t = parse_tsm_line(message);
    EXPECT_TRUE(t.has_value()) << "not a TSM line: " << message;
    return t.value_or(TsmLine{});
}

// The epoch/step fields every MFLossMonitor step line shares: epoch 1 of 2, step 120 of 6500.
void expect_step_120(const StepLine& s) {
    EXPECT_EQ(s.epoch, 1);
    EXPECT_EQ(s.epochs, 2);
    EXPECT_EQ(s.step_in_epoch, 120);
    EXPECT_EQ(s.steps_per_epoch, 6500);
    EXPECT_EQ(s.global_step, 120);
}

// ---- prefixes (the file sink's, stdout's, worker_<i>.log's other lines) ----

TEST(MindFormersLog, file_sink_prefix_splits_level_time_and_message) {
    const auto h = parse_log_head(
        "[INFO] 2026-07-24 14:20:06,869 [mindformers/core/callback/callback.py:747] print_output_info: { "
        "Epoch:[  "
        "1/  2], step:[   10/ 6500], loss: 7.123456, per_step_time: 1752ms, lr: 9.981987e-06, overflow cond: "
        "False, "
        "loss_scale: 1.0, global_norm: [1.5083363], train_throughput_per_npu: 170.738T");
    EXPECT_EQ(h.prefix, LogPrefix::file_sink);
    EXPECT_EQ(h.level, "INFO");
    EXPECT_EQ(h.time, "2026-07-24 14:20:06,869");
    EXPECT_EQ(h.message.substr(0, 22), "{ Epoch:[  1/  2], ste");
}

TEST(MindFormersLog, file_sink_prefix_keeps_the_leading_spaces_of_the_progress_message) {
    const auto h = parse_log_head(
        "[INFO] 2026-07-24 14:20:06,869 [mindformers/core/callback/callback.py:764] print_output_info:    "
        "0.1% "
        "|                                                  | 1.14155 samples/s/p  6:19:18 }");
    EXPECT_EQ(h.prefix, LogPrefix::file_sink);
    EXPECT_EQ(h.message.substr(0, 8), "   0.1% ");
}

TEST(MindFormersLog, file_sink_prefix_with_warning_level_and_module_caller) {
    const auto h = parse_log_head(
        "[WARNING] 2026-07-24 10:05:53,817 [mindformers/core/callback/callback.py:550] "
        "_fix_loss_for_parallel: "
        "pipeline stages: 2 > 1, the loss on the last card is valid.");
    EXPECT_EQ(h.prefix, LogPrefix::file_sink);
    EXPECT_EQ(h.level, "WARNING");
    EXPECT_EQ(h.time, "2026-07-24 10:05:53,817");
    EXPECT_EQ(h.message, "pipeline stages: 2 > 1, the loss on the last card is valid.");
    EXPECT_TRUE(is_partial_loss_warning(h.message));

    const auto m = parse_log_head(
        "[INFO] 2026-07-14 06:47:04,935 [mindformers/run_mindformer.py:71] <module>: Running MindFormers in "
        "GRAPH_MODE.");
    EXPECT_EQ(m.prefix, LogPrefix::file_sink);
    EXPECT_EQ(m.message, "Running MindFormers in GRAPH_MODE.");
}

TEST(MindFormersLog, stdout_prefix_with_the_absolute_log_dir_logger_name) {
    const auto h = parse_log_head(
        "2026-07-14 06:47:04,935 - mindformers/lgsl_data/dianxin_telechat/mindformers/output/log"
        "[mindformers/run_mindformer.py:71] - INFO - Running MindFormers in GRAPH_MODE.");
    EXPECT_EQ(h.prefix, LogPrefix::stdout_sink);
    EXPECT_EQ(h.level, "INFO");
    EXPECT_EQ(h.time, "2026-07-14 06:47:04,935");
    EXPECT_EQ(h.message, "Running MindFormers in GRAPH_MODE.");
}

TEST(MindFormersLog, stdout_prefix_of_r13_with_plain_logger_name_and_warning_level) {
    const auto h = parse_log_head(
        "2026-07-24 10:05:53,817 - mindformers[mindformers/core/callback/callback.py:550] - WARNING - "
        "pipeline "
        "stages: 2 > 1, the loss on the last card is valid.");
    EXPECT_EQ(h.prefix, LogPrefix::stdout_sink);
    EXPECT_EQ(h.level, "WARNING");
    EXPECT_EQ(h.message, "pipeline stages: 2 > 1, the loss on the last card is valid.");
}

TEST(MindFormersLog, stdout_prefix_keeps_the_leading_spaces_of_the_message) {
    const auto h = parse_log_head(
        "2026-07-24 10:05:53,816 - mindformers/home/ma-user/work/mindformers/output/log"
        "[mindformers/core/callback/callback.py:247] - INFO -  norm_size: (131072000, 4096)");
    EXPECT_EQ(h.prefix, LogPrefix::stdout_sink);
    EXPECT_EQ(h.message, " norm_size: (131072000, 4096)");
}

// The spec's STDOUT regex takes the first "[file:line] - LEVEL - " (lazy name group), whatever the level.
TEST(MindFormersLog, stdout_level_is_the_first_marker_even_when_the_message_quotes_another_level) {
    const auto h = parse_log_head(
        "2026-07-24 10:05:53,817 - mindformers/out/log[mindformers/tools/utils.py:12] - WARNING - copied "
        "line: "
        "2026-07-24 10:05:50,000 - mindformers/out/log[mindformers/x.py:1] - INFO - hello");
    EXPECT_EQ(h.prefix, LogPrefix::stdout_sink);
    EXPECT_EQ(h.level, "WARNING");
    EXPECT_EQ(h.message,
              "copied line: 2026-07-24 10:05:50,000 - mindformers/out/log[mindformers/x.py:1] - INFO - hello");
}

TEST(MindFormersLog, mindspore_python_and_glog_lines) {
    const auto py = parse_log_head(
        "[WARNING] ME(56203:281473441098720,MainProcess):2026-07-14-06:47:00.610.000 "
        "[mindspore/graph/_mark_deprecated.py:59] Module 'mindspore.common.api' is deprecated ...");
    EXPECT_EQ(py.prefix, LogPrefix::mindspore);
    EXPECT_EQ(py.level, "WARNING");
    EXPECT_EQ(py.time, "2026-07-14-06:47:00.610.000");
    EXPECT_EQ(py.message, "Module 'mindspore.common.api' is deprecated ...");

    const auto cc = parse_log_head(
        "[WARNING] ANALYZER(56203,ffffa4786be0,python):2026-07-14-06:47:29.883.643 "
        "[mindspore/ccsrc/frontend/jit/ps/static_analysis/auto_monad.cc:1613] ClearIsolatedNodes] Some side "
        "effect "
        "nodes ...");
    EXPECT_EQ(cc.prefix, LogPrefix::mindspore);
    EXPECT_EQ(cc.time, "2026-07-14-06:47:29.883.643");
    EXPECT_EQ(cc.message, "ClearIsolatedNodes] Some side effect nodes ...");

    const auto err =
        parse_log_head("[ERROR] ME(9:ab,MainProcess):2026-07-14-06:47:00.610.000 [mindspore/train/model.py:1] boom");
    EXPECT_EQ(err.prefix, LogPrefix::mindspore);
    EXPECT_EQ(err.level, "ERROR");
    EXPECT_EQ(err.message, "boom");
}

TEST(MindFormersLog, continuation_and_raw_lines_have_no_prefix) {
    for (const char* line : {
             "local_norm:",
             "[2.6010452e+02 4.3218001e-03 1.1944357e+00 3.1500420e-01 4.8612779e-01",
             " 2.8873496e+00 2.7900999e-03 5.9934416e+00 3.9811306e+00 5.3928442e+00]",
             "[3.0 4.0]",
             "Traceback (most recent call last):",
             "  File \"/home/ma-user/work/mindformers/run_mindformer.py\", line 354, in <module>",
             "    raise ValueError(",
             "ValueError: Current global norm [51.204178] of step 4 has been 2 consecutive times greater "
             "than "
             "threshold 3.0, stop training...",
             "{'context': {'mode': 0}}",
             "",
             "2026-07-24 10:05:53,816",
             "[INFO] not a time",
         }) {
        EXPECT_EQ(parse_log_head(line).prefix, LogPrefix::none) << line;
    }
}

TEST(MindFormersLog, trailing_carriage_return_is_not_part_of_the_message) {
    const auto h = parse_log_head(
        "[INFO] 2026-07-24 14:20:06,869 [mindformers/core/callback/callback.py:1001] on_train_step_end: "
        "embedding_local_norm: 251.79117\r");
    EXPECT_EQ(h.prefix, LogPrefix::file_sink);
    EXPECT_EQ(h.message, "embedding_local_norm: 251.79117");
}

// ---- MFLossMonitor step lines ----

TEST(MindFormersLog, standard_sink_step_line) {
    const auto s = step_ok(
        "{ Epoch:[  1/  2], step:[  120/ 6500], loss: 2.345678, per_step_time: 1752ms, lr: 9.981987e-06, "
        "overflow "
        "cond: False, loss_scale: 1.0, global_norm: [1.5083363], train_throughput_per_npu: 170.738T");
    expect_step_120(s);
    EXPECT_DOUBLE_EQ(s.loss.value_or(-1), 2.345678);
    EXPECT_FALSE(s.loss_epoch_mean.has_value());
    EXPECT_FALSE(s.lm_loss || s.load_balancing_loss || s.mtp_loss || s.indexer_loss);
    EXPECT_DOUBLE_EQ(s.per_step_ms.value_or(-1), 1752);
    EXPECT_DOUBLE_EQ(s.lr.value_or(-1), 9.981987e-06);
    EXPECT_EQ(s.overflow, std::optional<bool>(false));
    EXPECT_DOUBLE_EQ(s.loss_scale.value_or(-1), 1.0);
    EXPECT_DOUBLE_EQ(s.global_norm.value_or(-1), 1.5083363);
    EXPECT_DOUBLE_EQ(s.throughput_tflops.value_or(-1), 170.738);
}

TEST(MindFormersLog, non_sink_step_line_has_current_and_epoch_mean_loss) {
    const auto s = step_ok(
        "{ Epoch:[  1/  2], step:[  120/ 6500], loss:[2.345678/2.401234], per_step_time: 1752ms, lr: "
        "9.981987e-06, "
        "overflow cond: False, loss_scale: 1.0, global_norm: [1.5083363]");
    expect_step_120(s);
    EXPECT_DOUBLE_EQ(s.loss.value_or(-1), 2.345678);
    EXPECT_DOUBLE_EQ(s.loss_epoch_mean.value_or(-1), 2.401234);
    EXPECT_DOUBLE_EQ(s.global_norm.value_or(-1), 1.5083363);
    EXPECT_FALSE(s.throughput_tflops.has_value());
}

TEST(MindFormersLog, step_line_without_lr_segment) {
    const auto s = step_ok(
        "{ Epoch:[  1/  2], step:[  120/ 6500], loss: 2.345678, per_step_time: 1752ms, overflow cond: False, "
        "loss_scale: 1.0, global_norm: [1.5083363]");
    expect_step_120(s);
    EXPECT_DOUBLE_EQ(s.loss.value_or(-1), 2.345678);
    EXPECT_FALSE(s.lr.has_value());
    EXPECT_DOUBLE_EQ(s.per_step_ms.value_or(-1), 1752);
    EXPECT_DOUBLE_EQ(s.loss_scale.value_or(-1), 1.0);
    EXPECT_DOUBLE_EQ(s.global_norm.value_or(-1), 1.5083363);
}

TEST(MindFormersLog, global_norm_none_without_clip_grad) {
    const auto s = step_ok(
        "{ Epoch:[  1/  2], step:[  120/ 6500], loss: 2.345678, per_step_time: 1752ms, lr: 9.981987e-06, "
        "overflow "
        "cond: False, loss_scale: 1.0, global_norm: None");
    expect_step_120(s);
    EXPECT_FALSE(s.global_norm.has_value());
    EXPECT_DOUBLE_EQ(s.loss_scale.value_or(-1), 1.0);
    EXPECT_DOUBLE_EQ(s.lr.value_or(-1), 9.981987e-06);
}

TEST(MindFormersLog, loss_scale_unavailable_with_a_foreign_wrapper) {
    const auto s = step_ok(
        "{ Epoch:[  1/  2], step:[  120/ 6500], loss: 2.345678, per_step_time: 1752ms, lr: 9.981987e-06, "
        "overflow "
        "cond: False, loss_scale: unavailable, global_norm: None");
    expect_step_120(s);
    EXPECT_DOUBLE_EQ(s.loss.value_or(-1), 2.345678);
    EXPECT_FALSE(s.loss_scale.has_value());
    EXPECT_FALSE(s.global_norm.has_value());
    EXPECT_EQ(s.overflow, std::optional<bool>(false));
}

TEST(MindFormersLog, moe_and_mtp_separate_losses) {
    const auto s = step_ok(
        "{ Epoch:[  1/  2], step:[  120/ 6500], loss: 2.345678, lm_loss: 2.301234, load_balancing_loss: "
        "0.012345, "
        "mtp_loss: 2.456789, per_step_time: 1752ms, lr: 9.981987e-06, overflow cond: False, loss_scale: 1.0, "
        "global_norm: [1.5083363], train_throughput_per_npu: 170.738T");
    expect_step_120(s);
    EXPECT_DOUBLE_EQ(s.loss.value_or(-1), 2.345678);
    EXPECT_DOUBLE_EQ(s.lm_loss.value_or(-1), 2.301234);
    EXPECT_DOUBLE_EQ(s.load_balancing_loss.value_or(-1), 0.012345);
    EXPECT_DOUBLE_EQ(s.mtp_loss.value_or(-1), 2.456789);
    EXPECT_FALSE(s.indexer_loss.has_value());
    EXPECT_DOUBLE_EQ(s.global_norm.value_or(-1), 1.5083363);
    EXPECT_DOUBLE_EQ(s.throughput_tflops.value_or(-1), 170.738);
}

TEST(MindFormersLog, indexer_loss_of_dsa_models) {
    const auto s = step_ok(
        "{ Epoch:[  1/  2], step:[  120/ 6500], loss: 2.345678, lm_loss: 2.301234, indexer_loss: 0.032100, "
        "per_step_time: 1752ms, lr: 9.981987e-06, overflow cond: False, loss_scale: 1.0, global_norm: "
        "[1.5083363], "
        "train_throughput_per_npu: 170.738T");
    expect_step_120(s);
    EXPECT_DOUBLE_EQ(s.lm_loss.value_or(-1), 2.301234);
    EXPECT_DOUBLE_EQ(s.indexer_loss.value_or(-1), 0.0321);
    EXPECT_FALSE(s.load_balancing_loss.has_value());
    EXPECT_FALSE(s.mtp_loss.has_value());
}

TEST(MindFormersLog, overflow_with_dynamic_loss_scale_and_infinite_global_norm) {
    const auto s = step_ok(
        "{ Epoch:[  1/  2], step:[  120/ 6500], loss: 2.345678, per_step_time: 1752ms, lr: 9.981987e-06, "
        "overflow "
        "cond: True, loss_scale: 32768.0, global_norm: [inf]");
    expect_step_120(s);
    EXPECT_EQ(s.overflow, std::optional<bool>(true));
    EXPECT_DOUBLE_EQ(s.loss_scale.value_or(-1), 32768.0);
    ASSERT_TRUE(s.global_norm.has_value());
    EXPECT_TRUE(std::isinf(*s.global_norm) && *s.global_norm > 0);
}

TEST(MindFormersLog, nan_loss_and_nan_global_norm) {
    // Python renders f"{nan:5.6f}" as "  nan".
    const auto s = step_ok(
        "{ Epoch:[  1/  2], step:[  120/ 6500], loss:   nan, per_step_time: 1752ms, lr: 9.981987e-06, "
        "overflow "
        "cond: True, loss_scale: 1.0, global_norm: [nan]");
    ASSERT_TRUE(s.loss.has_value());
    EXPECT_TRUE(std::isnan(*s.loss));
    ASSERT_TRUE(s.global_norm.has_value());
    EXPECT_TRUE(std::isnan(*s.global_norm));
}

TEST(MindFormersLog, pipeline_stage_line_with_zero_loss) {
    const auto s = step_ok(
        "{ Epoch:[  1/  2], step:[    3/ 6500], loss: 0.000000, per_step_time: 7641ms, lr: 2.5641025e-08, "
        "overflow "
        "cond: False, loss_scale: 1.0, global_norm: [47.329006], train_throughput_per_npu: 62.178T");
    EXPECT_EQ(s.step_in_epoch, 3);
    EXPECT_EQ(s.global_step, 3);
    EXPECT_EQ(s.loss, std::optional<double>(0.0));
    EXPECT_DOUBLE_EQ(s.per_step_ms.value_or(-1), 7641);
    EXPECT_DOUBLE_EQ(s.lr.value_or(-1), 2.5641025e-08);
    EXPECT_DOUBLE_EQ(s.global_norm.value_or(-1), 47.329006);
    EXPECT_DOUBLE_EQ(s.throughput_tflops.value_or(-1), 62.178);
}

TEST(MindFormersLog, r13_to_r16_three_decimal_loss) {
    const auto s = step_ok(
        "{ Epoch:[  1/  2], step:[  120/ 6500], loss: 2.346, per_step_time: 1752ms, lr: 9.981987e-06, "
        "overflow "
        "cond: False, loss_scale: 1.0, global_norm: [1.5083363]");
    expect_step_120(s);
    EXPECT_DOUBLE_EQ(s.loss.value_or(-1), 2.346);
    EXPECT_DOUBLE_EQ(s.global_norm.value_or(-1), 1.5083363);
    EXPECT_FALSE(s.throughput_tflops.has_value());

    const auto ns = step_ok(
        "{ Epoch:[  1/  1], step:[   92/25880], loss:[2.346/2.401], per_step_time: 2068ms, overflow cond: "
        "False, "
        "loss_scale: 262144.0, global_norm: None");
    EXPECT_EQ(ns.epoch, 1);
    EXPECT_EQ(ns.epochs, 1);
    EXPECT_EQ(ns.step_in_epoch, 92);
    EXPECT_EQ(ns.steps_per_epoch, 25880);
    EXPECT_EQ(ns.global_step, 92);
    EXPECT_DOUBLE_EQ(ns.loss.value_or(-1), 2.346);
    EXPECT_DOUBLE_EQ(ns.loss_epoch_mean.value_or(-1), 2.401);
    EXPECT_DOUBLE_EQ(ns.per_step_ms.value_or(-1), 2068);
    EXPECT_FALSE(ns.lr.has_value());
    EXPECT_DOUBLE_EQ(ns.loss_scale.value_or(-1), 262144.0);
    EXPECT_FALSE(ns.global_norm.has_value());
}

TEST(MindFormersLog, global_step_counts_earlier_epochs) {
    const auto s = step_ok(
        "{ Epoch:[  2/  3], step:[   17/ 6500], loss: 1.500000, per_step_time: 1752ms, lr: 1e-05, overflow "
        "cond: "
        "False, loss_scale: 1.0, global_norm: 0.5");
    EXPECT_EQ(s.epoch, 2);
    EXPECT_EQ(s.epochs, 3);
    EXPECT_EQ(s.global_step, 6500 + 17);
    EXPECT_DOUBLE_EQ(s.lr.value_or(-1), 1e-05);
    EXPECT_DOUBLE_EQ(s.global_norm.value_or(-1), 0.5);  // a 0-d global norm prints without brackets

    // Widths grow past %3d/%5d.
    const auto wide = step_ok(
        "{ Epoch:[1234/2000], step:[123456/200000], loss: 1.500000, per_step_time: 1752ms, lr: 1.e-05, "
        "overflow "
        "cond: False, loss_scale: 1.0, global_norm: [0.5]");
    EXPECT_EQ(wide.global_step, 1233LL * 200000 + 123456);
    EXPECT_DOUBLE_EQ(wide.lr.value_or(-1), 1e-05);  // np.array2string spelling
}

TEST(MindFormersLog, progress_lines_are_not_step_lines) {
    for (const char* prog : {
             "   0.0% |                                                  | 0.00600 samples/s/p  25 days, "
             "2:07:41 }",
             "  12.3% |██████                                            | 0.13094 samples/s/p  1 day, "
             "3:34:25 }",
             "  100.0% |██████████████████████████████████████████████████| 0.12096 samples/s/p  0:00:00 }",
         }) {
        EXPECT_FALSE(parse_step_line(prog).has_value()) << prog;
        EXPECT_FALSE(parse_tsm_line(prog).has_value()) << prog;
        EXPECT_FALSE(parse_skip_line(prog).has_value()) << prog;
        EXPECT_FALSE(parse_spike_line(prog).has_value()) << prog;
        EXPECT_FALSE(parse_embedding_line(prog).has_value()) << prog;
    }
}

TEST(MindFormersLog, step_parser_rejects_other_messages_and_damaged_step_lines) {
    for (const char* msg : {
             "Epoch:[  1/  2], step:[   10/ 6500] device_local_norm: 1.3920451",
             "{'a': 1}",
             "{ Epoch:[  1/  2], step:[  120/ 6500], loss: 2.345678, per_step_time: 1752ms",
             "{ Epoch:[  1/  2], step:[  120/ 6500], loss: 2.345678, per_step_time: 1752.5ms, lr: 1e-05, "
             "overflow "
             "cond: False, loss_scale: 1.0, global_norm: [1.0]",
             "",
         }) {
        EXPECT_FALSE(parse_step_line(msg).has_value()) << msg;
    }
}

// ---- PyNative trainer ----

TEST(MindFormersLog, pynative_line_with_every_optional_field) {
    const auto s = step_ok(
        "{ step:[   10/ 1000], consumed_samples: 640, global_batch_size: 64, loss:   7.123456, "
        "per_step_time:   "
        "1752ms, load_balancing_loss:   0.012345, mtp_1_loss:   7.456789, lr: 9.981987e-06, grad_norm:   "
        "1.508336, "
        "throughput: 170.74T }");
    EXPECT_EQ(s.step_in_epoch, 10);
    EXPECT_EQ(s.global_step, 10);
    EXPECT_EQ(s.steps_per_epoch, 1000);
    EXPECT_DOUBLE_EQ(s.loss.value_or(-1), 7.123456);
    EXPECT_DOUBLE_EQ(s.per_step_ms.value_or(-1), 1752);
    EXPECT_DOUBLE_EQ(s.load_balancing_loss.value_or(-1), 0.012345);
    ASSERT_EQ(s.extra_losses.size(), 1u);
    EXPECT_EQ(s.extra_losses[0].first, "mtp_1_loss");
    EXPECT_DOUBLE_EQ(s.extra_losses[0].second, 7.456789);
    EXPECT_DOUBLE_EQ(s.lr.value_or(-1), 9.981987e-06);
    EXPECT_DOUBLE_EQ(s.global_norm.value_or(-1), 1.508336);
    EXPECT_DOUBLE_EQ(s.throughput_tflops.value_or(-1), 170.74);
    EXPECT_FALSE(s.loss_epoch_mean.has_value());
}

TEST(MindFormersLog, pynative_line_of_a_non_last_pipeline_stage) {
    const auto s = step_ok(
        "{ step:[   10/ 1000], consumed_samples: None, global_batch_size: None, loss: N/A (non-last PP "
        "stage, refer "
        "to last stage for real loss), per_step_time:   1752ms, grad_norm: NaN }");
    EXPECT_EQ(s.global_step, 10);
    EXPECT_FALSE(s.loss.has_value());
    EXPECT_DOUBLE_EQ(s.per_step_ms.value_or(-1), 1752);
    ASSERT_TRUE(s.global_norm.has_value());
    EXPECT_TRUE(std::isnan(*s.global_norm));
    EXPECT_FALSE(s.lr.has_value());
    EXPECT_TRUE(s.extra_losses.empty());
}

// ---- TrainingStateMonitor ----

TEST(MindFormersLog, tsm_scalar_tags_keep_their_full_names) {
    const struct {
        const char* message;
        const char* tag;
        double value;
    } cases[] = {
        {"Epoch:[  1/  2], step:[   10/ 6500] local_norm/model.layers.0.attention.wq.weight: 0.01873346",
         "local_norm/model.layers.0.attention.wq.weight", 0.01873346},
        {"Epoch:[  1/  2], step:[   10/ 6500] device_local_norm: 1.3920451", "device_local_norm", 1.3920451},
        {"Epoch:[  1/  2], step:[   10/ 6500] adam_m_norm/model.layers.0.attention.wq.weight: "
         "0.00215328112244606",
         "adam_m_norm/model.layers.0.attention.wq.weight", 0.00215328112244606},
        {"Epoch:[  1/  2], step:[   10/ 6500] adam_v_norm/model.layers.0.attention.wq.weight: "
         "3.1852999882175936e-07",
         "adam_v_norm/model.layers.0.attention.wq.weight", 3.1852999882175936e-07},
        {"Epoch:[  1/  2], step:[   10/ 6500] weight_norm: 1203.8817138671875", "weight_norm", 1203.8817138671875},
        {"Epoch:[  1/  2], step:[   10/ 6500] throughput_linearity: 0.9926543577526307", "throughput_linearity",
         0.9926543577526307},
        {"Epoch:[  1/  2], step:[   10/ 6500] device_accum_local_lm_loss: 14.247312", "device_accum_local_lm_loss",
         14.247312},
        {"Epoch:[  1/  2], step:[   10/ 6500] max_attention_logit/max: 13.25", "max_attention_logit/max", 13.25},
        {"Epoch:[  1/  2], step:[   10/ 6500] "
         "weight_stable_rank/model.layers.0.attention.wq.weight/expert_max: "
         "3.5",
         "weight_stable_rank/model.layers.0.attention.wq.weight/expert_max", 3.5},
    };
    for (const auto& c : cases) {
        const auto t = tsm_ok(c.message);
        EXPECT_EQ(t.tag, c.tag) << c.message;
        EXPECT_EQ(t.global_step, 10) << c.message;
        ASSERT_EQ(t.values.size(), 1u) << c.message;
        EXPECT_DOUBLE_EQ(t.values[0], c.value) << c.message;
    }
}

TEST(MindFormersLog, tsm_micro_local_loss_is_a_one_element_list) {
    const auto t = tsm_ok("Epoch:[  1/  2], step:[   10/ 6500] micro_local_lm_loss: [7.135756]");
    EXPECT_EQ(t.tag, "micro_local_lm_loss");
    EXPECT_EQ(t.global_step, 10);
    EXPECT_EQ(t.values, (std::vector<double>{7.135756}));
}

TEST(MindFormersLog, tsm_list_values) {
    const auto t =
        tsm_ok("Epoch:[  1/  2], step:[   10/ 6500] max_attention_logit/model.layers.0.attention: [12.5, 13.25]");
    EXPECT_EQ(t.tag, "max_attention_logit/model.layers.0.attention");
    EXPECT_EQ(t.values, (std::vector<double>{12.5, 13.25}));

    const auto np = tsm_ok("Epoch:[  1/  2], step:[   10/ 6500] micro_local_mtp_loss: [ 1.5  2.  nan]");
    EXPECT_EQ(np.tag, "micro_local_mtp_loss");
    ASSERT_EQ(np.values.size(), 3u);
    EXPECT_DOUBLE_EQ(np.values[0], 1.5);
    EXPECT_DOUBLE_EQ(np.values[1], 2.0);
    EXPECT_TRUE(std::isnan(np.values[2]));
}

TEST(MindFormersLog, tsm_global_step_counts_earlier_epochs_and_old_four_decimal_values) {
    const auto t = tsm_ok("Epoch:[  3/  4], step:[    7/  100] local_norm/model.layers.0.attention.wq.weight: 0.0187");
    EXPECT_EQ(t.global_step, 2 * 100 + 7);
    EXPECT_EQ(t.tag, "local_norm/model.layers.0.attention.wq.weight");
    EXPECT_EQ(t.values, (std::vector<double>{0.0187}));
}

TEST(MindFormersLog, tsm_parser_rejects_step_lines_and_text_values) {
    EXPECT_FALSE(parse_tsm_line("{ Epoch:[  1/  2], step:[  120/ 6500], loss: 2.345678, per_step_time: 1752ms, "
                                "overflow cond: False, loss_scale: 1.0, global_norm: None")
                     .has_value());
    EXPECT_FALSE(parse_tsm_line("Epoch:[  1/  2], step:[   10/ 6500] note: hello").has_value());
    EXPECT_FALSE(parse_tsm_line("Epoch:[  1/  2], step:[   10/ 6500]").has_value());
    EXPECT_FALSE(parse_tsm_line("Will be Training epochs:2, sink_size:1").has_value());
}

// ---- data skip ----

TEST(MindFormersLog, skip_line) {
    const auto s = parse_skip_line("opt_global_step: 0, skip_data_grad_norm_threshold: 3.0, is_skip: [ True]");
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->opt_global_step, 0);
    EXPECT_DOUBLE_EQ(s->threshold, 3.0);
    EXPECT_TRUE(s->is_skip);

    const auto later = parse_skip_line("opt_global_step: 1234, skip_data_grad_norm_threshold: 2.5, is_skip: [ True]");
    ASSERT_TRUE(later.has_value());
    EXPECT_EQ(later->opt_global_step, 1234);
    EXPECT_DOUBLE_EQ(later->threshold, 2.5);

    EXPECT_FALSE(parse_skip_line("opt_global_step: x, skip_data_grad_norm_threshold: 3.0, is_skip: [ True]"));
    EXPECT_FALSE(
        parse_skip_line("Current global norm [1.0] of step 1 has been 1 consecutive times greater than "
                        "threshold: 3.0"));
}

TEST(MindFormersLog, consecutive_spike_line_has_a_colon_before_the_threshold) {
    const auto s = parse_spike_line(
        "Current global norm [44.313248] of step 1 has been 1 consecutive times greater than threshold: 3.0");
    ASSERT_TRUE(s.has_value());
    EXPECT_DOUBLE_EQ(s->global_norm, 44.313248);
    EXPECT_EQ(s->step, 1);
    EXPECT_EQ(s->count, 1);
    EXPECT_DOUBLE_EQ(s->threshold, 3.0);
    EXPECT_FALSE(s->stop);
}

TEST(MindFormersLog, stop_line_with_and_without_the_value_error_prefix) {
    for (const char* line : {"ValueError: Current global norm [47.329006] of step 2 has been 2 consecutive "
                             "times greater than threshold "
                             "3.0, stop training...",
                             "Current global norm [47.329006] of step 2 has been 2 consecutive times greater "
                             "than threshold 3.0, stop "
                             "training..."}) {
        const auto s = parse_spike_line(line);
        ASSERT_TRUE(s.has_value()) << line;
        EXPECT_DOUBLE_EQ(s->global_norm, 47.329006);
        EXPECT_EQ(s->step, 2);
        EXPECT_EQ(s->count, 2);
        EXPECT_DOUBLE_EQ(s->threshold, 3.0);
        EXPECT_TRUE(s->stop);
    }
    EXPECT_FALSE(parse_spike_line("Current global norm [4.1035132] is greater equal than threshold 3.0, stop "
                                  "training...")
                     .has_value());
}

// ---- embedding norm and warnings ----

TEST(MindFormersLog, embedding_local_norm_on_stage_zero_and_other_stages) {
    EXPECT_EQ(parse_embedding_line("embedding_local_norm: 251.79117"), std::optional<double>(251.79117));
    EXPECT_EQ(parse_embedding_line("embedding_local_norm: 0"), std::optional<double>(0.0));
    EXPECT_FALSE(parse_embedding_line("embedding_local_norm: None").has_value());
    EXPECT_FALSE(parse_embedding_line(" norm_size: (1, 2)").has_value());
}

TEST(MindFormersLog, partial_loss_warnings) {
    EXPECT_TRUE(is_partial_loss_warning("pipeline stages: 2 > 1, the loss on the last card is valid."));
    EXPECT_TRUE(is_partial_loss_warning("micro_batch_interleave_num: 2 > 1, multiple copies in parallel is open."));
    EXPECT_TRUE(is_partial_loss_warning("When zero_bubble_v is enabled, loss is valid only on rank 0"));
    EXPECT_FALSE(is_partial_loss_warning("Running MindFormers in GRAPH_MODE."));
}

// ---- tracebacks ----

TEST(MindFormersLog, traceback_start_and_exception_lines) {
    EXPECT_TRUE(is_traceback_start("Traceback (most recent call last):"));
    EXPECT_FALSE(is_traceback_start("  File \"x.py\", line 1, in <module>"));
    EXPECT_FALSE(is_traceback_start("Traceback"));

    for (const char* line : {
             "ValueError: Current global norm [51.204178] of step 4 has been 2 consecutive times greater "
             "than "
             "threshold 3.0, stop training...",
             "RuntimeError: TREError occurred......",
             "mindspore.common.exceptions.FooError: bad",
             "KeyboardInterrupt",
             "SystemExit: 1",
             "ValueError",
         }) {
        EXPECT_TRUE(is_exception_line(line)) << line;
    }
    for (const char* line : {
             "Traceback (most recent call last):",
             "  File \"/home/ma-user/work/mindformers/run_mindformer.py\", line 354, in <module>",
             "    raise ValueError(",
             "local_norm:",
             "valueError: lower case",
             "ValueErrors are bad",
             "",
         }) {
        EXPECT_FALSE(is_exception_line(line)) << line;
    }
}

TEST(MindFormersLog, log_numbers_with_brackets_and_numpy_spellings) {
    EXPECT_EQ(parse_log_number("1.5"), std::optional<double>(1.5));
    EXPECT_EQ(parse_log_number("[1.5]"), std::optional<double>(1.5));
    EXPECT_EQ(parse_log_number("[ 1.5 ]"), std::optional<double>(1.5));
    EXPECT_EQ(parse_log_number("1.e-05"), std::optional<double>(1e-05));
    EXPECT_EQ(parse_log_number("[1.]"), std::optional<double>(1.0));
    EXPECT_TRUE(std::isnan(parse_log_number("[nan]").value_or(0)));
    EXPECT_EQ(parse_log_number("inf"), std::optional<double>(INFINITY));
    EXPECT_FALSE(parse_log_number("None").has_value());
    EXPECT_FALSE(parse_log_number("unavailable").has_value());
}

// ---- the rendered fixtures (worker_0.log, info.log) ----

}  // namespace
}  // namespace msmon
