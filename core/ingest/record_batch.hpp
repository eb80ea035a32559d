// What one ingest transaction carries: new keys, parsed rows, parse errors, and the file offsets they advance.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/parse/msprobe_csv.hpp"

namespace msmon {

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
    double values[kMaxNumericOps] = {};
};

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
    std::string header;       // the header record, once read
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

struct RecordBatch {
    std::vector<RunInfo> new_runs;
    std::vector<TensorInfo> new_tensors;
    std::vector<LayoutInfo> new_layouts;
    std::vector<TextInfo> new_texts;
    std::vector<SampleRow> rows;
    std::vector<ParseIssue> issues;
    std::vector<StackEntry> stacks;
    std::vector<FileProgress> files;  // the final progress of every file this batch advanced

    std::size_t value_count() const {
        std::size_t n = 0;
        for (const auto& r : rows)
            n += static_cast<std::size_t>(r.value_count) + (r.shape_id != 0) + (r.dtype_id != 0);
        return n;
    }
    bool empty() const {
        return new_runs.empty() && new_tensors.empty() && new_layouts.empty() && new_texts.empty() &&
               rows.empty() && issues.empty() && stacks.empty() && files.empty();
    }
};

}  // namespace msmon
