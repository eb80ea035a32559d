// A file the engine follows: where reading stands, and how its records are read.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/ingest/record_batch.hpp"
#include "core/layout/monitor_layout.hpp"
#include "core/parse/msprobe_csv.hpp"

namespace msmon {

// How a followed file is read.
enum class FileFormat {
    csv_data,            // msprobe statistics CSV
    csv_stack,           // stack_info.csv
    log_file_sink,       // MindFormers info.log (file prefix)
    log_stdout,          // msrun worker_<i>.log (stdout prefix, tracebacks)
    json_anomaly_dump,   // anomaly_detected/rank<r>/anomaly.json, anomaly_analyse.json
    json_health,         // health_ckpts.json
    json_module_struct,  // module_struct/rank<r>/module_struct.json
    tf_events,           // TensorBoard events.out.tfevents.* (binary records)
};

inline bool is_whole_file(FileFormat f) {
    return f == FileFormat::json_anomaly_dump || f == FileFormat::json_health || f == FileFormat::json_module_struct;
}

struct TrackedFile {
    FileProgress progress;
    FileFormat format = FileFormat::csv_data;
    int rank = 0;  // logs and JSON documents: the rank from the path
    CsvRole role = CsvRole::data;
    bool v2 = false;                          // monitor_v2 file: kinds come from (slug, scope)
    std::shared_ptr<const CsvSchema> schema;  // from the header record, shared by files with the same header
    std::int64_t layout_id = 0;
    bool header_rejected = false;     // header unusable: rows are counted as malformed
    bool dirty = false;               // queued for reading
    bool in_batch = false;            // progress advanced in the batch being built
    bool skipping_long_line = false;  // discarding an oversized line up to its newline
    bool read_failed = false;         // the last read failed (e.g. permission denied): said once, retried
    bool settling = false;            // waits for its batch's commit, then may be forgotten (see below)
    std::uint64_t batch_seq = 0;      // this session's number of the last batch that carried its progress
};

// msprobe's CSVs, one per step and kind, are forgotten once read to their end and committed (their progress is in
// the store, looked up again if they change): memory follows the files being written, not every file ever seen.
inline bool forgotten_when_read(FileFormat f) {
    return f == FileFormat::csv_data || f == FileFormat::csv_stack;
}

}  // namespace msmon
