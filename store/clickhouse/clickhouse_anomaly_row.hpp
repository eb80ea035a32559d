// One anomaly as a row of ClickHouse's anomalies table (kAnomalyColumns, RowBinary): what agents ship and what
// the job-level judge writes.
#pragma once

#include <cstdint>
#include <string>

#include "core/model/anomaly_record.hpp"
#include "store/clickhouse/row_binary.hpp"

namespace msmon {

void write_anomaly_row(RowBinaryWriter& w, const std::string& job, const std::string& node, std::uint64_t spool,
                       std::int64_t id, const AnomalyRecord& a);

}  // namespace msmon
