// The rendered MindFormers fixtures (../shared/fixtures/mindformers-rendered), parsed line by line with
// the exact values of each record.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/parse/mindformers_log.hpp"
#include "tests/support/test_env.hpp"

namespace msmon {
namespace {

std::vector<std::string> fixture_lines(const std::string& name) {
    std::istringstream in(test::read_file(test::shared_dir() + "/fixtures/mindformers-rendered/" + name));
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

TEST(MindFormersLog, rendered_worker_log_parses_line_by_line) {
    if (test::shared_dir().empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: no MindFormers fixtures to read");
    const auto lines = fixture_lines("worker_0.log");
    ASSERT_EQ(lines.size(), 38u);

    std::vector<StepLine> steps;
    std::vector<double> embeddings;
    std::vector<SkipLine> skips;
    std::vector<SpikeLine> spikes;
    int prefixed = 0, continuation = 0, warnings = 0, progress = 0, tracebacks = 0, exceptions = 0;
    std::vector<std::string> others;
    for (const auto& line : lines) {
        const auto h = parse_log_head(line);
        if (h.prefix == LogPrefix::none) {
            ++continuation;
            tracebacks += is_traceback_start(line);
            if (is_exception_line(line)) {
                ++exceptions;
                auto s = parse_spike_line(line);
                EXPECT_TRUE(s.has_value()) << line;
                if (s) spikes.push_back(*s);
            }
            continue;
        }
        ++prefixed;
        EXPECT_EQ(h.prefix, LogPrefix::stdout_sink) << line;
        EXPECT_EQ(h.time.size(), 23u) << line;
        const std::string_view m = h.message;
        if (h.level == "WARNING") {
            EXPECT_TRUE(is_partial_loss_warning(m)) << line;
            ++warnings;
        } else {
            EXPECT_EQ(h.level, "INFO") << line;
        }
        if (m.substr(0, 2) == "{ ") {
            auto s = parse_step_line(m);
            EXPECT_TRUE(s.has_value()) << "step line does not parse: " << line;
            if (s) steps.push_back(*s);
        } else if (m.find("samples/s/p") != std::string_view::npos) {
            EXPECT_FALSE(parse_step_line(m).has_value());
            ++progress;
        } else if (auto e = parse_embedding_line(m)) {
            embeddings.push_back(*e);
        } else if (auto k = parse_skip_line(m)) {
            skips.push_back(*k);
        } else if (auto c = parse_spike_line(m)) {
            spikes.push_back(*c);
        } else {
            others.emplace_back(m.substr(0, 12));
        }
        EXPECT_FALSE(parse_tsm_line(m).has_value()) << line;
    }
    EXPECT_EQ(prefixed, 25);
    EXPECT_EQ(continuation, 13);
    EXPECT_EQ(warnings, 2);
    EXPECT_EQ(progress, 2);
    EXPECT_EQ(tracebacks, 1);
    EXPECT_EQ(exceptions, 1);

    ASSERT_EQ(steps.size(), 2u);
    for (int i = 0; i < 2; ++i) {
        const StepLine& s = steps[static_cast<std::size_t>(i)];
        EXPECT_EQ(s.epoch, 1);
        EXPECT_EQ(s.epochs, 2);
        EXPECT_EQ(s.step_in_epoch, 3 + i);
        EXPECT_EQ(s.steps_per_epoch, 6500);
        EXPECT_EQ(s.global_step, 3 + i);
        EXPECT_EQ(s.loss, std::optional<double>(0.0));  // stage 0 of 2: not the real loss
        EXPECT_DOUBLE_EQ(s.lr.value_or(-1), 2.5641025e-08);
        EXPECT_EQ(s.overflow, std::optional<bool>(false));
        EXPECT_DOUBLE_EQ(s.loss_scale.value_or(-1), 1.0);
    }
    EXPECT_DOUBLE_EQ(steps[0].global_norm.value_or(-1), 47.329006);
    EXPECT_DOUBLE_EQ(steps[1].global_norm.value_or(-1), 51.204178);
    EXPECT_DOUBLE_EQ(steps[0].per_step_ms.value_or(-1), 7641);
    EXPECT_DOUBLE_EQ(steps[1].per_step_ms.value_or(-1), 7629);
    EXPECT_DOUBLE_EQ(steps[0].throughput_tflops.value_or(-1), 62.178);
    EXPECT_DOUBLE_EQ(steps[1].throughput_tflops.value_or(-1), 62.276);

    EXPECT_EQ(embeddings, (std::vector<double>{260.10452, 313.8564}));

    ASSERT_EQ(skips.size(), 2u);
    for (const auto& k : skips) {
        EXPECT_EQ(k.opt_global_step, 1);
        EXPECT_DOUBLE_EQ(k.threshold, 3.0);
        EXPECT_TRUE(k.is_skip);
    }

    ASSERT_EQ(spikes.size(), 2u);
    EXPECT_FALSE(spikes[0].stop);
    EXPECT_EQ(spikes[0].step, 3);
    EXPECT_EQ(spikes[0].count, 1);
    EXPECT_DOUBLE_EQ(spikes[0].global_norm, 47.329006);
    EXPECT_DOUBLE_EQ(spikes[0].threshold, 3.0);
    EXPECT_TRUE(spikes[1].stop);
    EXPECT_EQ(spikes[1].step, 4);
    EXPECT_EQ(spikes[1].count, 2);
    EXPECT_DOUBLE_EQ(spikes[1].global_norm, 51.204178);
    EXPECT_DOUBLE_EQ(spikes[1].threshold, 3.0);

    // The rest: the local-norm dump heads, the warnings and the checkpoint-save lines, in order.
    std::vector<std::string> expected_others;
    for (int i = 0; i < 2; ++i) {
        expected_others.push_back(" norm_size: ");
        expected_others.push_back("pipeline sta");
        for (const std::string& s :
             std::vector<std::string>{"......Saving", "global_batch", "epoch_num: " + std::to_string(3 + i),
                                      "step_num: " + std::to_string(3 + i), "global_step:", "Finish savin"})
            expected_others.push_back(s.substr(0, 12));
    }
    EXPECT_EQ(others, expected_others);
}

TEST(MindFormersLog, rendered_rank_info_log_parses_line_by_line) {
    if (test::shared_dir().empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: no MindFormers fixtures to read");
    const auto lines = fixture_lines("rank_7_info.log");
    ASSERT_EQ(lines.size(), 13u);

    std::vector<StepLine> steps;
    std::vector<TsmLine> tsm;
    int progress = 0;
    for (const auto& line : lines) {
        const auto h = parse_log_head(line);
        ASSERT_EQ(h.prefix, LogPrefix::file_sink) << line;
        EXPECT_EQ(h.level, "INFO");
        if (auto s = parse_step_line(h.message)) {
            steps.push_back(*s);
        } else if (auto t = parse_tsm_line(h.message)) {
            tsm.push_back(*t);
        } else {
            EXPECT_NE(h.message.find("samples/s/p"), std::string_view::npos) << line;
            ++progress;
        }
    }
    EXPECT_EQ(progress, 1);

    ASSERT_EQ(steps.size(), 1u);
    const StepLine& s = steps[0];
    EXPECT_EQ(s.epoch, 1);
    EXPECT_EQ(s.epochs, 2);
    EXPECT_EQ(s.step_in_epoch, 10);
    EXPECT_EQ(s.steps_per_epoch, 6500);
    EXPECT_EQ(s.global_step, 10);
    EXPECT_DOUBLE_EQ(s.loss.value_or(-1), 7.123456);
    EXPECT_DOUBLE_EQ(s.per_step_ms.value_or(-1), 1752);
    EXPECT_DOUBLE_EQ(s.lr.value_or(-1), 9.981987e-06);
    EXPECT_EQ(s.overflow, std::optional<bool>(false));
    EXPECT_DOUBLE_EQ(s.loss_scale.value_or(-1), 1.0);
    EXPECT_DOUBLE_EQ(s.global_norm.value_or(-1), 1.5083363);
    EXPECT_DOUBLE_EQ(s.throughput_tflops.value_or(-1), 170.738);

    const std::vector<std::pair<std::string, double>> expected = {
        {"local_norm/model.layers.0.attention.wq.weight", 0.01873346},
        {"local_norm/model.layers.0.feed_forward.w1.weight", 0.04112874},
        {"device_local_norm", 1.3920451},
        {"local_norm/model.layers.0.attention_norm.weight", 0.0007215},
        {"micro_local_lm_loss", 7.135756},
        {"micro_local_lm_loss", 7.111556},
        {"adam_m_norm/model.layers.0.attention.wq.weight", 0.00215328112244606},
        {"adam_v_norm/model.layers.0.attention.wq.weight", 3.1852999882175936e-07},
        {"weight_norm", 1203.8817138671875},
        {"throughput_linearity", 0.9926543577526307},
        {"device_accum_local_lm_loss", 14.247312},
    };
    ASSERT_EQ(tsm.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(tsm[i].tag, expected[i].first) << "TSM line " << i;
        EXPECT_EQ(tsm[i].global_step, 10) << "TSM line " << i;
        ASSERT_EQ(tsm[i].values.size(), 1u) << "TSM line " << i;
        EXPECT_EQ(tsm[i].values[0], expected[i].second) << "TSM line " << i << " (" << expected[i].first << ")";
    }
}

}  // namespace
}  // namespace msmon
