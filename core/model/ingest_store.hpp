// The store as the ingest engine sees it: restore where reading stopped, and commit one batch atomically.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/model/record_batch.hpp"

namespace msmon {

// Everything small enough to load whole at start-up. Tensors are loaded per run, on first use.
struct IngestSnapshot {
    std::vector<RunInfo> runs;
    std::vector<LayoutInfo> layouts;
    std::vector<TextInfo> texts;
    // Files of the formats with a stored kind (core/ingest/file_formats.hpp: logs, event files and JSON documents, a
    // few per rank, which the engine keeps in memory). msprobe's CSVs (one per step and kind: 200,000 in a long job)
    // are looked up by path when they are seen (IngestStore::load_file), and forgotten again once read.
    std::vector<FileProgress> files;
    std::int64_t file_count = 0;  // every file in the store
    std::int64_t max_tensor_id = 0;
    std::int64_t max_file_id = 0;
    std::vector<WholeFileState> whole_files;
    std::vector<std::pair<std::string, std::string>> settings;
};

// A stored row with the run of its tensor.
struct StoredSample {
    std::int64_t run_id = 0;
    SampleRow row;
};

// Implemented by store/ (SQLite); core/ never speaks SQL.
class IngestStore {
public:
    virtual ~IngestStore() = default;
    // Called on the engine's reading thread.
    virtual IngestSnapshot load_snapshot() = 0;
    // The stored progress of the file at `path`, if any (its last committed batch's).
    virtual std::optional<FileProgress> load_file(const std::string& path) = 0;
    virtual std::vector<TensorInfo> load_tensors(std::int64_t run_id) = 0;
    // Detector state saved for these tensors (absent ones have none yet).
    virtual std::vector<DetectorStateRecord> load_detector_states(const std::vector<std::int64_t>& tensor_ids) = 0;
    // Stored rows of every tensor of `kind` with first_step <= step <= last_step, in no particular order (for
    // detectors rebuilding what they held in memory when the previous session ended). value_count is 0: the
    // caller knows how many values the row's layout has; absent and NaN values read as NaN.
    virtual std::vector<StoredSample> load_samples(const std::string& kind, std::int64_t first_step,
                                                   std::int64_t last_step) = 0;
    // The same rows, handed to `visit` one at a time as they are read: a caller that keeps less than the rows (the
    // cross-rank check's entries) never holds them all (a span of a 64-rank job's kind: tens of MB).
    virtual void visit_samples(const std::string& kind, std::int64_t first_step, std::int64_t last_step,
                               const std::function<void(StoredSample&)>& visit) {
        for (auto& s : load_samples(kind, first_step, last_step)) visit(s);
    }
    // Called on the engine's writing thread: rows, new keys, issues and file offsets in one transaction.
    // Throws on failure; nothing of the batch is then stored.
    virtual void commit(const RecordBatch& batch) = 0;
    // Whether a commit failure may pass by itself (disk full, database locked, I/O error): the batch is then
    // retried. Otherwise (a constraint, a corrupt store) the store refuses the batch for good and ingest stops.
    virtual bool failure_may_pass(const std::exception&) const { return true; }
};

}  // namespace msmon
