// A file the engine follows: where reading stands, and how its records are read.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ingest/file_formats.hpp"
#include "core/layout/monitor_layout.hpp"
#include "core/model/record_batch.hpp"
#include "core/parse/msprobe_csv.hpp"

namespace msmon {

struct TrackedFile {
    FileProgress progress;
    FileFormat format = FileFormat::csv_data;
    int rank = 0;  // logs and JSON documents: the rank from the path
    CsvRole role = CsvRole::data;
    bool v2 = false;                          // monitor_v2 file: kinds come from (slug, scope)
    std::shared_ptr<const CsvSchema> schema;  // from the header record, shared by files with the same header
    std::int64_t layout_id = 0;
    bool header_rejected = false;      // header unusable: rows are counted as malformed
    bool dirty = false;                // queued for reading
    bool in_batch = false;             // progress advanced in the batch being built
    bool skipping_long_line = false;   // discarding an oversized line up to its newline
    bool read_failed = false;          // the last read failed (e.g. permission denied): said once, retried
    bool settling = false;             // waits for its batch's commit, then may be forgotten (see below)
    std::uint64_t batch_seq = 0;       // this session's number of the last batch that carried its progress
    std::vector<std::string> cc_told;  // cc ops whose unreadable rows were explained (once per op; the rest counted)
};

}  // namespace msmon
