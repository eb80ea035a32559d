// Regression tests for what the libFuzzer targets in fuzz/ found: each feeds the exact bytes of a crashing input
// (or the smallest input of the same shape) to the parser entry point the target drives.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/ingest/event_file_consumer.hpp"
#include "core/model/key_registry.hpp"
#include "core/parse/json_documents.hpp"
#include "core/parse/mindformers_log.hpp"
#include "core/parse/tfrecord_framing.hpp"
#include "core/sim/tensorboard_writer.hpp"

namespace msmon {
namespace {

using namespace std::string_literals;

// An in-memory store for driving the event-file reader without SQLite: nothing stored, ids from the registry.
class NoStore final : public IngestStore {
public:
    IngestSnapshot load_snapshot() override { return {}; }
    std::optional<FileProgress> load_file(const std::string&) override { return std::nullopt; }
    std::vector<TensorInfo> load_tensors(std::int64_t) override { return {}; }
    std::vector<DetectorStateRecord> load_detector_states(const std::vector<std::int64_t>&) override { return {}; }
    std::vector<StoredSample> load_samples(const std::string&, std::int64_t, std::int64_t) override { return {}; }
    void commit(const RecordBatch&) override {}
};

TrackedFile event_file(KeyRegistry& keys, RecordBatch& batch) {
    RunInfo run;
    run.rank = 0;
    run.path = "/job/output#mindformers#rank0";
    run.format = "mindformers";
    TrackedFile f;
    f.format = FileFormat::tf_events;
    f.progress.id = 1;
    f.progress.path = "/job/output/tensorboard/rank_0/events.out.tfevents.1.host";
    f.progress.run_id = keys.run_id(run, batch);
    return f;
}

// fuzz/tf_events_fuzz (minimized to 57 bytes; framed by the harness): a text summary whose tag is not UTF-8
// ("run_mB\x05\x00\x80oy;\xff\xffsummary"). Saving the reader's state with the offset (each tensor tag's plugin, as
// JSON) threw nlohmann's type_error 316 out of EventFileConsumer::consume: the ingest thread died on such a file.
TEST(FuzzRegression, event_file_tag_that_is_not_utf8_does_not_throw_when_the_reader_state_is_saved) {
    const std::string payload =
        "\x0d\xc2\xc0\xda\x41\x2a\x30\x0a\x2e\x0a\x15\x72\x75\x6e\x5f\x6d"
        "\x42\x05\x00\x80\x6f\x79\x3b\xff\xff\x73\x75\x6d\x6d\x61\x72\x79"
        "\x4a\x08\x0a\x06\x0a\x04\x74\x65\x78\x74\x42\x0b\x08\x07\x12\x00"
        "\x42\x05\x00\x80\x6f\x79\x3b"s;
    NoStore store;
    KeyRegistry keys(store, IngestSnapshot{});
    RecordBatch batch;
    TrackedFile f = event_file(keys, batch);
    EventFileConsumer consumer(keys, 1u << 20);
    const std::string bytes = frame_record(payload);
    ConsumeResult r;
    ASSERT_NO_THROW(r = consumer.consume(f, bytes, static_cast<std::int64_t>(bytes.size()), batch));
    EXPECT_EQ(r.consumed, bytes.size());
    const EventFileContext saved = EventFileContext::parse(f.progress.context);
    ASSERT_EQ(saved.plugins.size(), 1u) << f.progress.context;
    EXPECT_EQ(saved.plugins.begin()->first, "run_mB\x05\x00\x80oy;\xff\xffsummary"s);
    EXPECT_EQ(saved.plugins.begin()->second, "text");
}

// The same, end to end across a restart: the tag's plugin is named only on its first value (TF 2.x), so the saved
// state must keep a tag that is not UTF-8 byte for byte, or its later values stop being read as text.
TEST(FuzzRegression, event_file_tag_that_is_not_utf8_keeps_its_plugin_across_a_restart) {
    const std::string tag = "cfg\xff\xfe/text_summary"s;
    NoStore store;
    KeyRegistry keys(store, IngestSnapshot{});
    RecordBatch batch;
    TrackedFile f = event_file(keys, batch);
    const std::string first =
        frame_record(encode_summary_event(1.0, 0, {{tag, TfValueSpec::Form::text, 0, "a", true}}));
    const std::string second =
        frame_record(encode_summary_event(2.0, 1, {{tag, TfValueSpec::Form::text, 0, "b", false}}));
    {
        EventFileConsumer consumer(keys, 1u << 20);
        ASSERT_NO_THROW(consumer.consume(f, first, static_cast<std::int64_t>(first.size()), batch));
    }
    f.progress.offset = static_cast<std::int64_t>(first.size());
    EventFileConsumer restarted(keys, 1u << 20);  // rebuilds its state from f.progress.context
    ASSERT_NO_THROW(restarted.consume(f, second, static_cast<std::int64_t>(first.size() + second.size()), batch));
    ASSERT_EQ(batch.events.size(), 2u);
    EXPECT_EQ(batch.events[0].message, "cfg\xff\xfe: a"s);
    EXPECT_EQ(batch.events[1].message, "cfg\xff\xfe: b"s);
    // Tags that are UTF-8 keep the readable form they always had.
    EventFileContext plain;
    plain.plugins["loss"] = "scalars";
    EXPECT_EQ(plain.serialize(), R"({"plugins":{"loss":"scalars"}})");
}

// fuzz/mindformers_log_fuzz, input "." (1 byte): the last dotted component of a would-be exception name was
// read one byte past the end of the line.
TEST(FuzzRegression, exception_line_ending_in_a_dot_is_not_read_past_its_end) {
    const std::string line = ".";  // its own allocation, so ASan sees a read past it
    EXPECT_FALSE(is_exception_line(std::string_view(line)));
    EXPECT_FALSE(is_exception_line("ValueError."));
    EXPECT_FALSE(is_exception_line("a.b."));
    EXPECT_TRUE(is_exception_line("mindspore.common.exceptions.FooError: x"));
    EXPECT_TRUE(is_exception_line("KeyboardInterrupt"));
}

// fuzz/json_documents_fuzz, input "\x08" "5e5555(": nlohmann reports a number too large for a double as
// out_of_range, not parse_error, and it escaped the reader.
TEST(FuzzRegression, json_number_overflow_is_an_invalid_document_not_an_exception) {
    std::string error;
    std::vector<ModuleStructEntry> modules;
    EXPECT_EQ(parse_module_struct("5e5555(", 0, modules, error), ParseOutcome::invalid);
    EXPECT_FALSE(error.empty());
    std::vector<AnomalyRecord> anomalies;
    EXPECT_EQ(parse_anomaly_dump(R"({"a": {"step": 1e999}})", anomalies, error), ParseOutcome::invalid);
    std::vector<CheckpointRecord> ckpts;
    EXPECT_EQ(parse_health_checkpoints("[1e400]", "h.json", ckpts, error), ParseOutcome::invalid);
}

// fuzz/seeds/json_documents/anomaly_odd_types.json: json::value() threw type_error on a string where an int
// belongs, and converted 1e300 to int with undefined behaviour. A field of the wrong type or range now reads as
// absent; booleans and in-range floats convert as before.
TEST(FuzzRegression, anomaly_fields_of_the_wrong_type_read_as_absent) {
    const std::string text =
        R"({"a_step_1_call_0": {"rank": "0", "step": 1e300, "micro_step": -1, "pp_stage": 18446744073709551615,)"
        R"( "vpp_stage": true, "call_id": 1.5, "tag_name": 7, "message": ["x"], "group_mates": [0, "x", 2]}})";
    std::vector<AnomalyRecord> out;
    std::string error;
    ASSERT_EQ(parse_anomaly_dump(text, out, error), ParseOutcome::ok) << error;
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].rank, 0);
    EXPECT_EQ(out[0].step, 0);
    EXPECT_EQ(out[0].micro_step, -1);
    EXPECT_EQ(out[0].pp_stage, 0);
    EXPECT_EQ(out[0].vpp, 1);
    EXPECT_EQ(out[0].call_id, 1);
    EXPECT_EQ(out[0].tag_name, "");
    EXPECT_EQ(out[0].message, "");
    EXPECT_EQ(out[0].group_mates, (std::vector<int>{0, 2}));
}

TEST(FuzzRegression, health_fields_of_the_wrong_type_read_as_absent) {
    const std::string text = R"([{"is_health": "0", "ckpt_name": "llama_rank_0_1-3_1.ckpt"}, {"is_health": 1e300,)"
                             R"( "ckpt_name": 5}, {"is_health": false, "ckpt_name": "x_rank_1-2_1.safetensors"}])";
    std::vector<CheckpointRecord> out;
    std::string error;
    ASSERT_EQ(parse_health_checkpoints(text, "health_ckpts.json", out, error), ParseOutcome::ok) << error;
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].name, "llama_rank_0_1-3_1.ckpt");
    EXPECT_FALSE(out[0].healthy);  // "0" is not the number 0: the "sick" flag defaults to 1
    EXPECT_EQ(out[1].name, "");
    EXPECT_FALSE(out[1].healthy);
    EXPECT_TRUE(out[2].healthy);  // false == 0, as json::value() converted it
    EXPECT_EQ(out[2].rank, 1);
}

// Found with the harness of fuzz/mindformers_log_fuzz: (epoch - 1) * steps_per_epoch overflowed int64 (UBSan).
TEST(FuzzRegression, step_numbers_whose_global_step_overflows_are_rejected) {
    EXPECT_FALSE(
        parse_step_line("{ Epoch:[9223372036854775807/1], step:[ 1/9223372036854775807], loss: 1.0, "
                        "per_step_time: 1ms, overflow cond: False, loss_scale: 1.0, global_norm: 1.0"));
    EXPECT_FALSE(parse_tsm_line("Epoch:[9223372036854775807/1], step:[1/9223372036854775807] x: 1"));
    const auto ok = parse_tsm_line("Epoch:[3/9], step:[4/100] x: 1");
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->global_step, 204);
}

// Found with the harnesses of fuzz/mindformers_log_fuzz and fuzz/json_documents_fuzz: libstdc++'s std::regex
// recurses once per character, and a line of some ten thousand bytes overflowed the stack.
TEST(FuzzRegression, long_lines_do_not_overflow_the_stack_in_std_regex) {
    // A TrainingStateMonitor line with a long list still parses: only its head goes through the regex.
    std::string list = "Epoch:[1/1], step:[2/5] local_norm: [";
    for (int i = 0; i < 40000; ++i) list += i ? ", 1.5" : "1.5";
    list += "]";
    const auto tsm = parse_tsm_line(list);
    ASSERT_TRUE(tsm);
    EXPECT_EQ(tsm->global_step, 2);
    EXPECT_EQ(tsm->values.size(), 40000u);
    EXPECT_FALSE(parse_tsm_line("Epoch:[1/1], step:[1/1] " + std::string(300000, 't') + ": 1"));

    const std::string long_tail(300000, 'x');
    EXPECT_FALSE(
        parse_step_line("{ Epoch:[1/1], step:[1/1], loss: 1.0, per_step_time: 1ms, overflow cond: False, "
                        "loss_scale: 1.0, global_norm: " +
                        long_tail));
    EXPECT_FALSE(parse_skip_line("opt_global_step: 0, skip_data_grad_norm_threshold: 3.0, is_skip: " + long_tail));
    EXPECT_FALSE(parse_spike_line("Current global norm " + long_tail));
    EXPECT_EQ(parse_log_head("[WARNING] ME(1:2,MainProcess):2026-07-14-06:47:00.610.000 [a.py:1] " + long_tail).prefix,
              LogPrefix::none);
    EXPECT_FALSE(parse_msprobe_message("Rule AnomalyTurbulence reports anomaly signal in ('" + long_tail +
                                       "', 'min') at step 1, current value 1, history mean 1."));
    EXPECT_FALSE(parse_checkpoint_name(long_tail + "_rank_0-1_1.ckpt"));
}

}  // namespace
}  // namespace msmon
