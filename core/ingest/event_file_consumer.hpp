// Turns whole records of a TensorBoard event file into series rows (scalars), config events (text summaries)
// and parse issues (CRC failures, undecodable records), tailing it like any other source: a record still being
// written waits, a corrupt one is reported with its byte offset and skipped.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/ingest/file_reader.hpp"
#include "core/ingest/tracked_file.hpp"
#include "core/model/key_registry.hpp"
#include "core/parse/tf_event_decoder.hpp"

namespace msmon {

// What reading an event file must remember between reads; saved with the offset (FileProgress::context).
struct EventFileContext {
    // A record too large for one read, being streamed past: bytes of data left, CRC so far, where it began.
    bool skipping = false;
    std::uint64_t skip_left = 0;
    std::uint32_t skip_crc = 0;
    std::int64_t skip_start = 0;
    std::uint64_t skip_length = 0;
    int skip_payload = 0;  // Event field of its payload (5: a summary we could not read)
    // Plugin of each tag whose values are tensors, from the first metadata seen for the tag.
    std::map<std::string, std::string, std::less<>> plugins;
    // MindFormers' event files: the launch of the job the file belongs to (a relaunch writes a new file), placed
    // by its first event's wall time; "" for the first launch (core/ingest/relaunch_runs.hpp).
    bool placed = false;
    std::string launch;

    std::string serialize() const;
    static EventFileContext parse(std::string_view text);
};

class EventFileConsumer : public FileReader {
public:
    // `read_chunk`: the engine's read size; records larger than this are streamed past, once the file holds
    // them whole.
    EventFileConsumer(KeyRegistry& keys, std::size_t read_chunk) : keys_(keys), read_chunk_(read_chunk) {}
    ConsumeResult consume(TrackedFile& file, std::string_view bytes, std::int64_t file_size,
                          RecordBatch& batch) override;

private:
    void handle_event(TrackedFile& file, EventFileContext& ctx, std::string_view folder, std::int64_t offset,
                      std::int64_t record, RecordBatch& batch, ConsumeResult& result);
    void add_scalar(TrackedFile& file, std::string_view tag, std::string_view folder, std::int64_t step, double value,
                    RecordBatch& batch, ConsumeResult& result);
    std::int64_t run_for_rank(const TrackedFile& file, int rank, RecordBatch& batch);
    void issue(TrackedFile& file, std::int64_t record, std::string reason, RecordBatch& batch, ConsumeResult& result);

    KeyRegistry& keys_;
    std::size_t read_chunk_;
    TfEvent event_;
    std::string error_;
    std::unordered_map<std::int64_t, EventFileContext> contexts_;  // by file id; rebuilt from the stored context
    std::unordered_map<std::string, std::int64_t> rank_runs_;      // "<run id>#<rank>" → run id
    // The row a (tensor, step) got in the batch being built, so msprobe's ops of one step share one row.
    std::unordered_map<std::int64_t, std::pair<std::int64_t, std::size_t>> open_rows_;
    std::int64_t timed_run_ = -1, timed_step_ = -1;  // the last (run, step) given a wall time
    std::int64_t run_ = 0;                           // the run of the file being read (its launch's)
};

}  // namespace msmon
