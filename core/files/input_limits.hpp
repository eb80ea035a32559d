// The bounds on what msmon reads from a file or a server, each a setting ([limits] in msmon's settings, in MiB) and
// each named in the message of what it refuses. Set once at start (before any thread), read everywhere after.
#pragma once

#include <cstdint>

namespace msmon {

struct InputLimits {
    static constexpr std::int64_t kMiB = std::int64_t{1} << 20;
    std::int64_t json_document = 64 * kMiB;         // health_ckpts.json, anomaly dumps, module_struct.json, configs
    std::int64_t prom_file = 16 * kMiB;             // the previous msmon.prom, read back on a restart
    std::int64_t clickhouse_answer = 64 * kMiB;     // a ClickHouse answer as sent (compressed)
    std::int64_t clickhouse_inflated = 256 * kMiB;  // ... and once inflated
    std::int64_t event_record = 256 * kMiB;         // one TensorBoard event record (and never past the file's end)
};

// The setting that raises each bound, as messages name it.
inline constexpr const char* kJsonDocumentLimit = "limits.json_document_mib";
inline constexpr const char* kPromFileLimit = "limits.prom_file_mib";
inline constexpr const char* kClickHouseAnswerLimit = "limits.clickhouse_answer_mib";
inline constexpr const char* kClickHouseInflatedLimit = "limits.clickhouse_inflated_mib";
inline constexpr const char* kEventRecordLimit = "limits.event_record_mib";

const InputLimits& input_limits();
void set_input_limits(const InputLimits& limits);

}  // namespace msmon
