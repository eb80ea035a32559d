// Rows of the local store's anomaly and checkpoint tables as records: one decoding for every reader of them
// (the Reader, the spool that ships them), and the group-mates text every store writes and reads.
#pragma once

#include <string>
#include <vector>

#include "core/model/anomaly_record.hpp"
#include "core/model/record_batch.hpp"
#include "store/sqlite_handle.hpp"

namespace msmon {

// The anomaly columns read_stored_anomaly expects, in order, each prefixed with `alias` (e.g. "a.").
std::string stored_anomaly_columns(const std::string& alias = "");
inline constexpr int kStoredAnomalyColumnCount = 19;
// One anomaly from stored_anomaly_columns() starting at column `c`.
AnomalyRecord read_stored_anomaly(const Statement& q, int c);

// "SELECT … FROM checkpoint ORDER BY source_path, position" and its rows.
inline constexpr const char* kStoredCheckpointsQuery =
    "SELECT source_path, position, name, rank, epoch, step, times, healthy FROM checkpoint ORDER BY source_path, "
    "position";
CheckpointRecord read_stored_checkpoint(const Statement& q);

// Group mates as stored: ranks joined with ','.
std::string group_mates_text(const std::vector<int>& mates);
std::vector<int> parse_group_mates(const std::string& text);

}  // namespace msmon
