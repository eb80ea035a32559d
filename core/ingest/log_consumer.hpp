// Turns complete lines of a MindFormers log (info.log or msrun's worker_<i>.log) into series rows and events.
// A relaunched job appends to the same logs; its lines go to a run of their own (core/ingest/relaunch_runs.hpp),
// named by the relaunch's "Running MindFormers in ..." time, which info.log and the worker log write alike.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/ingest/file_reader.hpp"
#include "core/ingest/tracked_file.hpp"
#include "core/model/key_registry.hpp"

namespace msmon {

// What a log reader must remember between reads (saved with the file offset, so a restart resumes exactly).
struct LogReaderContext {
    std::int64_t step = -1;             // the last step line's global step: steps for lines that carry none
    bool partial_loss_warning = false;  // "the loss on the last card is valid" seen before the next step line
    std::int64_t micro_step_of = -1;    // the step the micro counters belong to
    std::map<std::string, std::int64_t> micro_counts;  // micro_local_<tag>_loss lines seen for that step
    // The launch of the job these lines belong to: the relaunch's start time, or empty for the first launch.
    // A file read from its start is placed by its first line's time (a rotated log may begin mid-launch).
    bool placed = false;
    std::string launch;

    std::string serialize() const;
    static LogReaderContext parse(std::string_view text);
};

class LogConsumer : public FileReader {
public:
    explicit LogConsumer(KeyRegistry& keys) : keys_(keys) {}
    // Whole lines only; a traceback waits until its exception line.
    ConsumeResult consume(TrackedFile& file, std::string_view bytes, std::int64_t file_size,
                          RecordBatch& batch) override;

private:
    void handle_message(TrackedFile& file, LogReaderContext& ctx, std::string_view level, std::string_view time,
                        std::string_view message, std::int64_t line, RecordBatch& batch, ConsumeResult& result);
    void add_value(std::string_view kind, std::string_view name, std::optional<std::int64_t> micro, std::int64_t step,
                   double value, RecordBatch& batch, ConsumeResult& result);
    void add_event(TrackedFile& file, std::optional<std::int64_t> step, std::string kind, std::string_view time,
                   std::string message, RecordBatch& batch);

    KeyRegistry& keys_;
    std::int64_t value_layout_ = 0;
    std::int64_t run_ = 0;                                // the run of the lines being read
    std::map<std::int64_t, std::int64_t> first_step_ms_;  // per job (its first launch's run): the earliest step line
};

}  // namespace msmon
