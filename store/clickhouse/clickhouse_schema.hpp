// The whole-job tables in ClickHouse, created if missing. Written for the oldest server we support (Debian's
// 18.16): plain types (no LowCardinality, no Nullable in keys), ReplacingMergeTree for idempotent re-sends.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/clickhouse/clickhouse_client.hpp"

namespace msmon {

// The column lists the agent inserts, in RowBinary order.
inline constexpr const char* kPointColumns =
    "job, node, spool, seq, rank, run, kind, vpp_stage, name, micro_step, step, op, op_ord, tensor_ord, "
    "is_text, "
    "value, text";
inline constexpr const char* kAnomalyColumns =
    "job, node, spool, id, source, rule, rank, step, micro_step, kind, vpp_stage, name, op, value, "
    "has_reference, "
    "reference, message, tag_name, dump_key, call_id, pp_stage, vpp, group_mates, score";
inline constexpr const char* kEventColumns = "job, node, spool, id, run, rank, has_step, step, kind, time, message";
inline constexpr const char* kRankStepColumns = "job, node, rank, kind, op, step, acc, n, nans, version";
inline constexpr const char* kCheckpointColumns =
    "job, node, generation, source_path, position, name, rank, epoch, step, times, healthy";
inline constexpr const char* kIssueColumns = "job, node, spool, id, path, line, reason, excerpt";
inline constexpr const char* kNodeFilesColumns = "job, node, version, files";
inline constexpr const char* kModuleColumns = "job, node, generation, rank, module, structure, stack";
inline constexpr const char* kJudgedStepColumns = "job, step, ranks, rank_list, judge, version";

// The node name of the job-level judge's anomalies (agents' nodes are never empty), and the ids it gives them:
// from kJudgeIdBase up, a hash of the anomaly's key, so that judges writing one anomaly write the same row and
// the judge's row wins over an agent's of the same key (ReplacingMergeTree keeps the highest id).
inline constexpr const char* kJudgeNode = "";
inline constexpr std::int64_t kJudgeIdBase = std::int64_t{1} << 62;

// The summary of points per (job, step, rank): how many values (the materialized view's, and the backfill's).
std::string step_ranks_select(const std::string& database);
// The values the job-level judge reads (JobJudge::kinds()), step first (the materialized view's, and the backfill's).
std::string judge_rows_select(const std::string& database);

// CREATE statements for `database` (CREATE DATABASE first).
std::vector<std::string> clickhouse_ddl(const std::string& database);

// The SELECT that summarises points into series (the materialized view's, and the backfill's).
std::string series_select(const std::string& database);

// Runs clickhouse_ddl; fills series from points when its feed is new. Throws ClickHouseError / ClickHouseUnreachable.
void ensure_clickhouse_schema(const ClickHouseClient& client);

}  // namespace msmon
