// What one ingest transaction carries: new keys, parsed rows, parse errors, and the file offsets they advance.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model/anomaly_record.hpp"
#include "core/text/shared_text.hpp"

namespace msmon {

// At most this many numeric op columns per file (msprobe has 7 ops + 2 L2 features at most per file); the store has one
// column per op slot.
inline constexpr int kMaxNumericOps = 8;

// A rank run: one v1 run folder (<time>-rank<N>-<uid>) or one v2 rank_<N> folder.
struct RunInfo {
    std::int64_t id = 0;
    int rank = 0;
    std::string path;        // absolute path of the folder
    std::string time_label;  // from the folder name, empty for v2
    std::string uid;         // from the folder name, empty for v2
    std::string format;      // "msprobe" or "msprobe_v2"
};

// One statistic stream of one tensor: (run, kind, vpp_stage, name, micro_step). Ops live in the rows.
struct TensorInfo {
    std::int64_t id = 0;
    std::int64_t run_id = 0;
    std::string kind;
    std::string vpp_stage;
    std::string name;
    std::optional<std::int64_t> micro_step;
    std::int64_t layout_id = 0;  // layout of the first row seen: its op count makes the series count
    // Not stored: the tensor's place among its run's tensors of this kind, in the order the files first listed
    // them (the model's forward order for activations), the same whichever order runs were read in.
    std::int64_t ordinal = 0;
};

// An ordered op list from a CSV header ("min,max,norm,mean,nans,zeros,shape,dtype").
struct LayoutInfo {
    std::int64_t id = 0;
    std::string ops;
};

// An interned text value (shape, dtype).
struct TextInfo {
    std::int64_t id = 0;
    std::string text;
};

// One CSV data row: numeric ops in layout order, text ops as interned ids (0 = absent).
struct SampleRow {
    std::int64_t tensor_id = 0;
    std::int64_t step = 0;
    std::int32_t layout_id = 0;
    std::int32_t shape_id = 0;
    std::int32_t dtype_id = 0;
    std::int32_t value_count = 0;
    // Which source's word counts when two give the same (tensor, step): a row of higher precedence stays over a
    // lower one whatever order they were read in; of equal precedence the later write wins. MindFormers logs
    // round to 6 digits (kRoundedText); its TensorBoard event files hold the float itself (kFullPrecision).
    std::uint8_t precedence = 0;
    double values[kMaxNumericOps] = {};
};
inline constexpr std::uint8_t kRoundedText = 0, kFullPrecision = 1;

// Where reading of one file stands: identity (device, inode, fingerprint of its first bytes) and offset.
struct FileProgress {
    std::int64_t id = 0;
    std::int64_t run_id = 0;
    std::string path;
    std::string kind;
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::uint32_t fp_len = 0;
    std::uint64_t fp_hash = 0;
    std::int64_t offset = 0;  // bytes consumed: always at a record boundary
    std::int64_t line = 0;    // physical lines consumed (for error messages)
    std::int64_t issues = 0;  // malformed lines found in it (core/ingest/issue_cap.hpp: the first ones are stored)
    SharedText header;        // the header record, once read (shared by files with the same header)
    std::string context;      // reader state that must survive a restart with the offset (log files)
};

// Something that happened in the job, from its logs: a data skip, a global-norm spike, a stop, an error.
struct EventRecord {
    std::int64_t run_id = 0;
    int rank = 0;
    std::optional<std::int64_t> step;
    std::string kind;  // start, data_skip, global_norm_spike, stop, error, checkpoint_saved
    std::string time;  // the log line's own time text
    std::string message;
};

// A checkpoint listed in health_ckpts.json (is_health 0 = healthy), in file order.
struct CheckpointRecord {
    std::string name;
    int rank = 0;
    std::int64_t epoch = 0;
    std::int64_t step = 0;  // global step (sink_size 1: the epoch field E)
    std::int64_t times = 0;
    bool healthy = true;
    std::int64_t position = 0;
    std::string source_path;
};

// A file that is rewritten whole (anomaly.json, health_ckpts.json, module_struct.json): what was last read.
struct WholeFileState {
    std::string path;
    std::int64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::uint64_t hash = 0;
};

struct ModuleStructEntry {
    int rank = 0;
    std::string module;
    std::string json;  // the module's entry as JSON text
};

// Per-tensor detector state (msprobe-compatible EMA per op), saved with the rows it has seen.
struct DetectorStateRecord {
    std::int64_t tensor_id = 0;
    std::int64_t last_step = 0;
    std::string state;
};

// A line that could not be used: counted, logged, and stored with its file and line.
struct ParseIssue {
    std::int64_t file_id = 0;
    std::string path;
    std::int64_t line = 0;
    std::string reason;
    std::string excerpt;  // the start of the offending text, escaped for display
};

struct StackEntry {
    std::int64_t run_id = 0;
    std::string module;
    std::string stack;
};

// When a run wrote a step, as msmon can tell (core/ingest: a CSV's first-seen time while following, its mtime for
// what was there before): the wall-clock axis of the Chart.
struct StepTime {
    std::int64_t run_id = 0;
    std::int64_t step = 0;
    std::int64_t wall_ms = 0;  // ms since the epoch
};

struct RecordBatch {
    std::vector<RunInfo> new_runs;
    std::vector<TensorInfo> new_tensors;
    std::vector<LayoutInfo> new_layouts;
    std::vector<TextInfo> new_texts;
    std::vector<SampleRow> rows;
    std::vector<ParseIssue> issues;
    std::size_t unstored_issues = 0;  // malformed lines beyond their file's cap: counted in its progress only
    std::vector<StackEntry> stacks;
    std::vector<EventRecord> events;
    std::vector<AnomalyRecord> anomalies;
    std::vector<CheckpointRecord> checkpoints;  // replaces what was stored from the same source_path
    std::vector<std::string> checkpoint_sources;
    std::vector<ModuleStructEntry> module_structs;
    std::vector<DetectorStateRecord> detector_states;
    std::vector<WholeFileState> whole_files;
    std::vector<std::pair<std::string, std::string>> settings;  // store-wide settings (e.g. the monitor config)
    std::vector<std::string> cleared_settings;                  // settings removed, after `settings` are written
    std::vector<FileProgress> files;                            // the final progress of every file this batch advanced
    std::vector<StepTime> step_times;                           // the earliest per (run, step) is kept

    std::size_t value_count() const {
        std::size_t n = 0;
        for (const auto& r : rows) n += static_cast<std::size_t>(r.value_count) + (r.shape_id != 0) + (r.dtype_id != 0);
        return n;
    }
    bool empty() const {
        return new_runs.empty() && new_tensors.empty() && new_layouts.empty() && new_texts.empty() && rows.empty() &&
               issues.empty() && stacks.empty() && events.empty() && anomalies.empty() && checkpoint_sources.empty() &&
               module_structs.empty() && detector_states.empty() && whole_files.empty() && settings.empty() &&
               cleared_settings.empty() && files.empty() && step_times.empty();
    }
};

}  // namespace msmon
