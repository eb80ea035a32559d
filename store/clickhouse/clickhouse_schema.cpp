// Key choices. points is ordered (job, kind, op, name, step, rank, ...): one series is a range of the key,
// and one statistic at one step across every rank is a contiguous run inside it. The full key is also the
// identity ReplacingMergeTree collapses on, with seq (the agent's spool sequence) as the version: a re-sent
// row and a value the trainer re-wrote keep one row each, the latest. Readers query with FINAL. Anomalies
// collapse on msmon's own uniqueness key (as the local store's UNIQUE constraint); events on the spool's row
// id, since a step-less event (a start line) may legitimately repeat.
#include "store/clickhouse/clickhouse_schema.hpp"

namespace msmon {

std::vector<std::string> clickhouse_ddl(const std::string& db) {
    return {
        "CREATE DATABASE IF NOT EXISTS " + db,
        "CREATE TABLE IF NOT EXISTS " + db +
            ".points (job String, node String, spool UInt64, seq UInt64, rank Int32, run String, kind "
            "String, "
            "vpp_stage String, name String, micro_step Int64, step Int64, op String, op_ord UInt8, "
            "tensor_ord UInt64, is_text UInt8, value Float64, text String, shipped DateTime DEFAULT now()) "
            "ENGINE = ReplacingMergeTree(seq) "
            "ORDER BY (job, kind, op, name, step, rank, run, vpp_stage, micro_step)",
        "CREATE TABLE IF NOT EXISTS " + db +
            ".anomalies (job String, node String, spool UInt64, id Int64, source String, rule String, rank "
            "Int32, "
            "step Int64, micro_step Int64, kind String, vpp_stage String, name String, op String, value "
            "Float64, "
            "has_reference UInt8, reference Float64, message String, tag_name String, dump_key String, "
            "call_id Int64, pp_stage Int64, vpp Int64, group_mates String, score Float64, "
            "shipped DateTime DEFAULT now()) "
            "ENGINE = ReplacingMergeTree(id) ORDER BY (job, rank, step, source, rule, tag_name, op, "
            "dump_key)",
        "CREATE TABLE IF NOT EXISTS " + db +
            ".events (job String, node String, spool UInt64, id Int64, run Int64, rank Int32, has_step "
            "UInt8, "
            "step Int64, kind String, time String, message String, shipped DateTime DEFAULT now()) "
            "ENGINE = ReplacingMergeTree() ORDER BY (job, node, spool, id)",
        "CREATE TABLE IF NOT EXISTS " + db +
            ".checkpoints (job String, node String, generation UInt64, source_path String, position Int64, "
            "name String, rank Int32, epoch Int64, step Int64, times Int64, healthy UInt8, "
            "shipped DateTime DEFAULT now()) "
            "ENGINE = ReplacingMergeTree() ORDER BY (job, node, generation, source_path, position)",
    };
}

void ensure_clickhouse_schema(const ClickHouseClient& client) {
    for (const auto& sql : clickhouse_ddl(client.target().database)) client.query(sql);
}

}  // namespace msmon
