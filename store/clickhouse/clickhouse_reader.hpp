// The Reader over ClickHouse: the whole job, every node's ranks, for msmon-tui and the CLI unchanged.
#pragma once

#include <memory>
#include <string>

#include "store/clickhouse/clickhouse_client.hpp"
#include "store/reader.hpp"

namespace msmon {

// Opens the job `job` in `target` (empty: the job shipped to most recently). Throws ClickHouseError /
// ClickHouseUnreachable, or std::runtime_error when there is no such job.
std::unique_ptr<Reader> open_clickhouse_reader(const ClickHouseTarget& target, const std::string& job);

}  // namespace msmon
