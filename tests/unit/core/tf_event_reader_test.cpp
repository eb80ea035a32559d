// TensorBoard event files: the framing (CRC-32C, masked), the Event/Summary wire decoding against the real
// files in ../shared/fixtures/tensorboard-real (every scalar against expected.tsv), and tag mapping.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/parse/tensorboard_tags.hpp"
#include "core/parse/tf_event_decoder.hpp"
#include "core/parse/tfrecord_framing.hpp"
#include "core/sim/tensorboard_writer.hpp"
#include "core/text/number_text.hpp"
#include "tests/support/test_env.hpp"

namespace msmon {
namespace {

struct Scalar {
    std::int64_t step;
    double wall_time;
    std::string tag;
    double value;
};

// Every scalar of a file in order, as the README of the fixtures defines it (simple_value, or a tensor of a
// tag whose first metadata names the scalars plugin).
std::vector<Scalar> read_scalars(const std::string& bytes, int& records, int& bad) {
    std::vector<Scalar> out;
    std::map<std::string, std::string> plugins;
    TfEvent ev;
    std::string error;
    std::string_view rest = bytes;
    records = bad = 0;
    while (!rest.empty()) {
        const Frame f = next_frame(rest);
        if (f.status != FrameStatus::record) {
            ++bad;
            break;
        }
        ++records;
        if (!decode_tf_event(f.data, ev, error)) {
            ++bad;
        } else {
            for (const auto& v : ev.values) {
                if (!v.plugin_name.empty()) plugins.try_emplace(std::string(v.tag), std::string(v.plugin_name));
                if (v.has_simple) out.push_back({ev.step, ev.wall_time, std::string(v.tag), v.simple_value});
                else if (v.has_tensor && plugins[std::string(v.tag)] == "scalars" && v.tensor.has_number)
                    out.push_back({ev.step, ev.wall_time, std::string(v.tag), v.tensor.number});
            }
        }
        rest.remove_prefix(f.size);
    }
    return out;
}

void check_fixture(const std::string& folder, const std::string& file, int want_records) {
    const std::string dir = test::shared_dir();
    if (dir.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: no real TensorBoard event files to read");
    const std::string base = dir + "/fixtures/tensorboard-real/" + folder;
    int records = 0, bad = 0;
    const auto got = read_scalars(test::read_file(base + "/" + file), records, bad);
    EXPECT_EQ(bad, 0);
    EXPECT_EQ(records, want_records);
    std::istringstream tsv(test::read_file(base + "/expected.tsv"));
    std::size_t i = 0, rows = 0;
    long long declared = -1;
    for (std::string line; std::getline(tsv, line);) {
        if (line.rfind("# scalar_values\t", 0) == 0) declared = std::atoll(line.c_str() + 16);
        if (line.empty() || line[0] == '#') continue;
        std::vector<std::string> f;
        std::istringstream ls(line);
        for (std::string c; std::getline(ls, c, '\t');) f.push_back(c);
        ASSERT_EQ(f.size(), 4u) << line;
        ++rows;
        ASSERT_LT(i, got.size()) << "missing scalar " << line;
        const Scalar& s = got[i++];
        EXPECT_EQ(s.step, *parse_int(f[0])) << line;
        EXPECT_EQ(s.wall_time, *parse_double(f[1])) << line;
        EXPECT_EQ(s.tag, f[2]) << line;
        EXPECT_EQ(s.value, *parse_double(f[3])) << line;  // exact: the float32 widened to a double
    }
    EXPECT_EQ(got.size(), rows);
    EXPECT_EQ(static_cast<long long>(rows), declared);
}

TEST(TfEventReader, crc32c_matches_the_castagnoli_check_value) {
    EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
    // Continuing a CRC over pieces gives the CRC of the whole.
    EXPECT_EQ(crc32c("6789", 4, crc32c("12345", 5)), 0xE3069283u);
}

TEST(TfEventReader, tf1_lingvo_file_reads_every_scalar_exactly) {
    check_fixture("tf1-lingvo-bleu", "events.out.tfevents.test", 361);
}

TEST(TfEventReader, keras_file_with_graph_and_meta_graph_reads_every_scalar_exactly) {
    check_fixture("keras-tf112-wandb", "events.out.tfevents.1585769947.cvp", 105);
}

TEST(TfEventReader, flipped_byte_fails_the_data_crc_and_a_cut_record_waits) {
    std::string bytes =
        frame_record(encode_summary_event(1.5, 7, {{"loss", TfValueSpec::Form::simple, 2.5, "", false}}));
    EXPECT_EQ(next_frame(bytes).status, FrameStatus::record);
    for (std::size_t cut = 0; cut < bytes.size(); ++cut)
        EXPECT_EQ(next_frame(std::string_view(bytes).substr(0, cut)).status, FrameStatus::incomplete) << cut;
    std::string flipped = bytes;
    flipped[20] ^= 0x01;
    EXPECT_EQ(next_frame(flipped).status, FrameStatus::bad_data_crc);
    std::string bad_len = bytes;
    bad_len[0] ^= 0x01;
    EXPECT_EQ(next_frame(bad_len).status, FrameStatus::bad_length_crc);
}

TEST(TfEventReader, tf2_tensor_scalars_and_text_decode) {
    const std::string ev =
        encode_summary_event(3.0, 42,
                             {{"loss", TfValueSpec::Form::tensor_float, 0.25, "", true},
                              {"lr", TfValueSpec::Form::tensor_double, 1e-5, "", false},
                              {"config/text_summary", TfValueSpec::Form::text, 0, "seq_length: 4096", true}});
    TfEvent e;
    std::string error;
    ASSERT_TRUE(decode_tf_event(ev, e, error)) << error;
    EXPECT_EQ(e.step, 42);
    EXPECT_EQ(e.wall_time, 3.0);
    ASSERT_EQ(e.values.size(), 3u);
    EXPECT_EQ(e.values[0].plugin_name, "scalars");
    EXPECT_TRUE(e.values[0].tensor.has_number);
    EXPECT_EQ(e.values[0].tensor.number, 0.25);
    EXPECT_EQ(e.values[0].tensor.dims, 0);
    EXPECT_EQ(e.values[1].plugin_name, "");
    EXPECT_EQ(e.values[1].tensor.number, 1e-5);  // double in tensor_content
    EXPECT_EQ(e.values[2].plugin_name, "text");
    ASSERT_EQ(e.values[2].tensor.strings.size(), 1u);
    EXPECT_EQ(e.values[2].tensor.strings[0], "seq_length: 4096");
    EXPECT_FALSE(decode_tf_event(ev.substr(0, ev.size() - 3), e, error));
}

TEST(TfEventReader, half_and_bfloat16_bits) {
    EXPECT_EQ(half_to_float(0x3C00), 1.0f);
    EXPECT_EQ(half_to_float(0xC000), -2.0f);
    EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
    EXPECT_EQ(bfloat16_to_float(0x3F80), 1.0f);
}

TEST(TensorboardTags, mindformers_msprobe_expert_load_and_other_tags_map_to_series) {
    auto k = [](std::string_view tag, std::string_view folder = "rank_0") {
        const TbSeries s = map_tensorboard_tag(tag, folder);
        return s.kind + "|" + s.vpp_stage + "|" + s.name + "|" + s.op + "|" + (s.rank ? std::to_string(*s.rank) : "-") +
               "|" + (s.micro_step ? std::to_string(*s.micro_step) : "-");
    };
    EXPECT_EQ(k("loss"), "loss|||value|-|-");
    EXPECT_EQ(k("learning-rate"), "lr|||value|-|-");
    EXPECT_EQ(k("grad-norm"), "global_norm|||value|-|-");
    EXPECT_EQ(k("loss-scale"), "loss_scale|||value|-|-");
    EXPECT_EQ(k("iteration-time"), "per_step_time|||value|-|-");
    EXPECT_EQ(k("throughput"), "samples_per_second|||value|-|-");
    EXPECT_EQ(k("model-flops-throughput-per-npu"), "throughput|||value|-|-");
    EXPECT_EQ(k("loss vs samples"), "loss_vs_samples|||value|-|-");
    EXPECT_EQ(k("grad-norm-vs-samples"), "global_norm_vs_samples|||value|-|-");
    EXPECT_EQ(k("B-samples-per-day"), "billion_samples_per_day|||value|-|-");
    EXPECT_EQ(k("batch-size"), "global_batch_size|||value|-|-");
    EXPECT_EQ(k("batch-size vs samples"), "global_batch_size_vs_samples|||value|-|-");
    EXPECT_EQ(k("local_norm/model.layers.0.attention.wq.weight"),
              "local_norm||model.layers.0.attention.wq.weight|value|-|-");
    EXPECT_EQ(k("adam_m_norm/layers.0.w"), "adam_m_norm||layers.0.w|value|-|-");
    EXPECT_EQ(k("local_lm_loss"), "local_loss||lm|value|-|-");
    EXPECT_EQ(k("device_accum_local_lm_loss"), "device_accum_local_loss||lm|value|-|-");
    EXPECT_EQ(k("weight_norm"), "weight_norm|||value|-|-");
    EXPECT_EQ(k("throughput_linearity"), "throughput_linearity|||value|-|-");
    EXPECT_EQ(k("local_norm"), "tensorboard||local_norm|value|-|-");
    EXPECT_EQ(k("expert_load/layer_1", "expert_load_layer_1_ep_12"), "expert_load||layer_1/ep_12|value|-|-");
    EXPECT_EQ(k("expert_load/layer_1/ep_3"), "expert_load||layer_1/ep_3|value|-|-");
    EXPECT_EQ(k("0:decoder.layers.0.mlp.linear_fc1.weight/rank3/post_grad_norm"),
              "grad_reduced|0|decoder.layers.0.mlp.linear_fc1.weight|norm|3|-");
    EXPECT_EQ(k("1:layers.0.w:2/rank0/acc_grad_max"), "grad_unreduced|1|layers.0.w|max|0|2");
    EXPECT_EQ(k("0:layers.0.w/rank1/exp_avg_sq_mean"), "exp_avg_sq|0|layers.0.w|mean|1|-");
    EXPECT_EQ(k("vp0:layers.0.mlp.input:micro1/norm", "actv"), "actv|0|layers.0.mlp.input|norm|-|1");
    EXPECT_EQ(k("bleu/dev"), "tensorboard||bleu/dev|value|-|-");
    EXPECT_EQ(expert_index("ep_7"), 7);
    EXPECT_EQ(expert_index("x7"), std::nullopt);
}

}  // namespace
}  // namespace msmon
