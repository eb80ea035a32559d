// libFuzzer target: TensorBoard event files through the reader the ingest runs, EventFileConsumer::consume
// (framing, both CRCs, resync after a bad length CRC, streaming past records larger than a read,
// Event/Summary decoding, tag mapping, text summaries), fed whole and in pieces as a tailer reads a file
// being written, with the reader's state saved and restored between reads as a restart does. Also
// decode_tf_event and map_tensorboard_tag on the raw bytes, and framing round trips.
//
// Input: byte 0 picks the mode and the read size; the rest is the file. Mode "framed" (bit 0 set) treats the
// rest as records of <1-byte length><payload> and frames each with valid CRCs, so that mutations reach the
// decoder rather than failing the CRC; mode "raw" reads the bytes as a file.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ingest/event_file_consumer.hpp"
#include "core/model/key_registry.hpp"
#include "core/parse/tensorboard_tags.hpp"
#include "core/parse/tf_event_decoder.hpp"
#include "core/parse/tfrecord_framing.hpp"
#include "core/text/display_escape.hpp"

namespace {

void check(bool ok) {
    if (!ok) std::abort();
}

// Nothing stored: the consumer only asks the registry for ids.
class EmptyStore final : public msmon::IngestStore {
public:
    msmon::IngestSnapshot load_snapshot() override { return {}; }
    std::optional<msmon::FileProgress> load_file(const std::string&) override { return std::nullopt; }
    std::vector<msmon::TensorInfo> load_tensors(std::int64_t) override { return {}; }
    std::vector<msmon::DetectorStateRecord> load_detector_states(const std::vector<std::int64_t>&) override {
        return {};
    }
    std::vector<msmon::StoredSample> load_samples(const std::string&, std::int64_t, std::int64_t) override {
        return {};
    }
    void commit(const msmon::RecordBatch&) override {}
};

// The rows and issues of reading `file` whole in reads of `chunk` bytes (the tailer hands over what is new
// since the offset; the consumer takes whole records). `restart`: a new consumer per read, from the saved
// context.
struct ReadOutcome {
    std::size_t consumed = 0;
    std::size_t rows = 0, issues = 0, events = 0;
};

ReadOutcome read_all(std::string_view file, std::size_t chunk, std::size_t read_chunk, bool restart) {
    EmptyStore store;
    const msmon::IngestSnapshot snapshot;
    msmon::KeyRegistry keys(store, snapshot);
    msmon::RecordBatch batch;
    msmon::RunInfo run;
    run.rank = 2;
    run.path = "/job/output#mindformers#rank2";
    run.format = "mindformers";
    msmon::TrackedFile f;
    f.format = msmon::FileFormat::tf_events;
    f.rank = 2;
    f.progress.id = 1;
    f.progress.path = "/job/output/tensorboard/rank_2/expert_load_layer_1_ep_3/events.out.tfevents.1.host";
    f.progress.run_id = keys.run_id(run, batch);
    auto consumer = std::make_unique<msmon::EventFileConsumer>(keys, read_chunk);
    ReadOutcome out;
    std::size_t available = 0;
    int stalled = 0;
    while (out.consumed < file.size() || available < file.size()) {
        available = std::min(file.size(), available + chunk);
        const std::string_view bytes = file.substr(out.consumed, available - out.consumed);
        const msmon::ConsumeResult r = consumer->consume(f, bytes, static_cast<std::int64_t>(available), batch);
        check(r.consumed <= bytes.size());
        check(r.rows <= batch.rows.size());
        out.consumed += r.consumed;
        f.progress.offset += static_cast<std::int64_t>(r.consumed);
        f.progress.line += r.lines;
        out.rows += r.rows;
        out.issues += r.issues;
        // The saved context reads back as the same context.
        check(msmon::EventFileContext::parse(f.progress.context).serialize() == f.progress.context);
        if (restart) consumer = std::make_unique<msmon::EventFileConsumer>(keys, read_chunk);
        if (available == file.size()) {
            if (r.consumed == 0 && ++stalled > 1) break;  // the rest is an incomplete record: it waits
        }
    }
    for (const auto& e : batch.events) check(e.kind == "config" && e.message.find(": ") != std::string::npos);
    out.events = batch.events.size();
    for (const auto& row : batch.rows) check(row.value_count >= 1 && row.value_count <= msmon::kMaxNumericOps);
    return out;
}

}  // namespace

// Issues are logged as warnings: not on every input.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
    spdlog::set_level(spdlog::level::off);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const std::uint8_t mode = data[0];
    std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
    std::string file;
    if (mode & 1) {
        // <length byte><payload> records, framed with valid CRCs: the decoder sees every mutation.
        while (!rest.empty()) {
            const std::size_t n = std::min<std::size_t>(static_cast<unsigned char>(rest[0]), rest.size() - 1);
            const std::string_view payload = rest.substr(1, n);
            const std::string framed = msmon::frame_record(payload);
            const msmon::Frame f = msmon::next_frame(framed);
            check(f.status == msmon::FrameStatus::record && f.data == payload && f.size == framed.size());
            file += framed;
            rest = rest.substr(1 + n);
        }
    } else {
        file.assign(rest);
    }
    // Every frame of the file in turn, as far as the framing goes.
    for (std::string_view bytes = file; !bytes.empty();) {
        const msmon::Frame f = msmon::next_frame(bytes);
        if (f.status == msmon::FrameStatus::incomplete || f.status == msmon::FrameStatus::bad_length_crc) break;
        check(f.size == f.length + msmon::kTfRecordHeaderBytes + msmon::kTfRecordFooterBytes && f.size <= bytes.size());
        check(f.data.data() == bytes.data() + msmon::kTfRecordHeaderBytes && f.data.size() == f.length);
        bytes = bytes.substr(f.size);
    }
    // The raw bytes as one Event: decoding never reads out of bounds, and what it returns lies inside the
    // input.
    {
        msmon::TfEvent event;
        std::string error;
        const std::string_view raw = file;
        if (msmon::decode_tf_event(raw, event, error)) {
            auto inside = [&](std::string_view v) {
                return v.empty() || (v.data() >= raw.data() && v.data() + v.size() <= raw.data() + raw.size());
            };
            check(inside(event.file_version));
            for (const auto& v : event.values) {
                check(inside(v.tag) && inside(v.plugin_name));
                for (const auto& s : v.tensor.strings) check(inside(s));
                const msmon::TbSeries s = msmon::map_tensorboard_tag(v.tag, "expert_load_layer_1_ep_3");
                check(!s.kind.empty() && !s.op.empty());
                (void)msmon::escape_for_display(v.tag, 80);
            }
        } else {
            check(!error.empty());
        }
        (void)msmon::peek_tf_event_payload(raw);
    }
    // The whole file through the consumer: in one read, in small reads, and with a restart after every read.
    // How the bytes are cut into reads changes nothing of what is read. 1..61 bytes a read, but at most ~48
    // reads a pass: thousands of one-byte reads would make an input take seconds.
    const std::size_t chunk = std::max<std::size_t>(1 + (mode >> 1) % 61, file.size() / 48);
    const std::size_t read_chunk = 16 + (mode >> 4) * 8;  // records larger than this are streamed past
    const ReadOutcome whole = read_all(file, file.size() + 1, read_chunk, false);
    const ReadOutcome pieces = read_all(file, chunk, read_chunk, false);
    const ReadOutcome restarted = read_all(file, chunk, read_chunk, true);
    check(whole.consumed <= file.size());
    // (Rows may differ: msprobe's ops of one step join one row only within a consumer's life.)
    check(pieces.events == restarted.events && pieces.consumed == restarted.consumed);
    return 0;
}
