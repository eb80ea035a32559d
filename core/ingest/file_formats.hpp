// The input formats msmon reads, one descriptor each: how a file of it is recognised (its name and folder), whether
// it is appended to or rewritten whole, whether it is forgotten once read, what the store calls it, and which
// reader reads it. The engine dispatches through this table; a new format is its parser, its reader, and one line
// here (with its recogniser in source_layout.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace msmon {

enum class DirRole : int;
struct FileClass;

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

// The readers; one object of each reads every file of the formats that name it.
enum class ReaderId { csv, log, events, whole };
inline constexpr std::size_t kReaderCount = 4;

enum class Growth {
    appended,  // read from where the last read stopped; progress is a byte offset
    whole,     // rewritten in place: read again whole when it changes
};

struct FormatInfo {
    FileFormat format;
    std::string_view name;  // for messages and docs
    // True with `out` filled when a file called `name` in a folder of role `dir` (rank `dir_rank`) is of this format.
    bool (*recognise)(DirRole dir, int dir_rank, std::string_view name, FileClass& out);
    Growth growth;
    // msprobe's CSVs, one per step and kind, are forgotten once read to their end and committed (their progress
    // is in the store, looked up again if they change): memory follows the files being written, not every file.
    bool forgotten_when_read;
    bool rotates;          // a log: renamed or copied by rotation, its progress follows the file (not its name)
    bool mindformers_run;  // belongs to the MindFormers run of its rank, not to the folder's msprobe run
    // The file's kind in the store, and the formats kept in the ingest snapshot (the others are looked up by
    // path). Empty: the CSV's kind, from its name; not in the snapshot.
    std::string_view stored_kind;
    ReaderId reader;
    // Records are lines: one longer than a read is reported and skipped to its newline (event files bound their
    // records themselves).
    bool line_records;
    // Its rows time the steps they are of (msprobe's CSVs: written as each step ends).
    bool times_steps;
    // Says the job's settings (the config msrun's worker log prints, TensorBoard's config text): read before the
    // backlog's other files (core/ingest/backfill_plan.hpp), so that what is judged knows the job's thresholds.
    bool settings_first;
};

// Every format, in the order of the enum.
std::span<const FormatInfo> all_formats();
const FormatInfo& format_info(FileFormat f);
// The format a file the store knows was read as, from its stored kind and name.
FileFormat format_of_stored(std::string_view stored_kind, std::string_view file_name);

}  // namespace msmon
