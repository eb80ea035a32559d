// A file the engine follows: where reading stands, and how its records are read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/ingest/record_batch.hpp"
#include "core/layout/monitor_layout.hpp"
#include "core/parse/msprobe_csv.hpp"

namespace msmon {

struct TrackedFile {
    FileProgress progress;
    CsvRole role = CsvRole::data;
    bool v2 = false;                  // monitor_v2 file: kinds come from (slug, scope)
    std::optional<CsvSchema> schema;  // from the header record
    std::int64_t layout_id = 0;
    bool header_rejected = false;     // header unusable: rows are counted as malformed
    bool dirty = false;               // queued for reading
    bool in_batch = false;            // progress advanced in the batch being built
    bool skipping_long_line = false;  // discarding an oversized line up to its newline
};

}  // namespace msmon
