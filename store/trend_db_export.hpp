// Export to msprobe's trend-visualisation database, monitor_data.trend.db, as `msprobe data2db` writes it.
#pragma once

#include <cstdint>
#include <string>

namespace msmon {

inline constexpr const char* kTrendDbFileName = "monitor_data.trend.db";

struct TrendDbOptions {
    // data2db --micro_step (default true): step becomes a global micro-batch index and every target's
    // micro_step is 0. False: step and micro_step are kept as written.
    bool micro_step = true;
};

struct TrendDbSummary {
    std::string path;  // the database written
    std::int64_t rows = 0;
    std::int64_t targets = 0;
    std::int64_t metrics = 0;
    std::int64_t tags = 0;
    std::int64_t ranks = 0;
    std::int64_t min_step = 0, max_step = 0;  // as in global_stats
    std::int64_t skipped_rows = 0;            // vpp_stage not an integer (data2db skips these too)
    std::int64_t older_runs = 0;              // run folders left out: one folder per rank, the latest
};

// Reads the msmon store at `store_path` (one consistent snapshot) and writes OUT_DIR/monitor_data.trend.db
// with data2db's schema and row mapping. OUT_DIR is created if needed; an existing database there
// is replaced, as data2db does, but only once the new one is complete (written beside it, then renamed).
// Throws std::runtime_error (SqliteError for SQLite failures) with a message fit for the user.
TrendDbSummary export_trend_db(const std::string& store_path, const std::string& out_dir,
                               const TrendDbOptions& options);

}  // namespace msmon
