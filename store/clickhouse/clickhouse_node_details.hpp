// What the Reader over ClickHouse answers from the nodes' details (shipped by clickhouse_sink_details.cpp):
// parse issues, file counts, module structure and stacks. The rest of that Reader: clickhouse_reader.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/clickhouse/clickhouse_client.hpp"
#include "store/reader.hpp"

namespace msmon {

// Files tracked and parse issues stored, summed over the job's nodes (StoreSummary::files, ::issues).
void read_node_detail_counts(const ClickHouseClient& client, const std::string& job, StoreSummary& into);

// The job's parse issues, newest first: by shipment time, then the node's issue id descending (the order
// of each node's own store). Paths are as on their node: the node is not named.
std::vector<IssueRecord> read_node_issues(const ClickHouseClient& client, const std::string& job, std::size_t limit);

// As Reader::module_info, over each node's latest module generation (a rank held by several nodes: the
// first node by name answers).
Reader::ModuleInfo read_module_info(const ClickHouseClient& client, const std::string& job, int rank,
                                    const std::string& tensor_name);

}  // namespace msmon
