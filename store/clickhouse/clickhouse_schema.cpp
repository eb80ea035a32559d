// Key choices. points is ordered (job, kind, op, name, step, rank, ...): one series is a range of the key,
// and one statistic at one step across every rank is a contiguous run inside it. The full key is also the
// identity ReplacingMergeTree collapses on, with seq (the agent's spool sequence) as the version: a re-sent
// row and a value the trainer re-wrote keep one row each, the latest. Readers query with FINAL. Anomalies
// collapse on msmon's own uniqueness key (as the local store's UNIQUE constraint); events on the spool's row
// id, since a step-less event (a start line) may legitimately repeat. series holds one row per (job, series,
// rank) with its first and last step, fed by a materialized view on every insert into points: the catalog,
// the ranks' last steps and name lookups read it instead of scanning every value (AggregatingMergeTree with
// -State columns; 18.16 has no SimpleAggregateFunction). rank_steps holds per (job, kind, op, step, rank) the
// aggregate over every parameter that the agent's local rank_block holds (store/rank_step_blocks.hpp), re-sent
// with a newer version whenever a shipment touches that step: the Overview's series without a name filter.
// Parse issues are keyed like events; a node's file count is one row per node, its latest version kept;
// module structure and stacks are, like checkpoints, a whole new generation when they change. step_ranks counts
// the values per (job, step, rank), fed like series: the job-level judge polls it to see which ranks wrote a
// step (a re-sent row counts twice, which only makes the judge look again). judged_steps records each step a
// judge judged, and with which ranks (rank_ranges text), one row per step and judge (a late rank judged replaces
// it with the longer list).
#include "store/clickhouse/clickhouse_schema.hpp"

#include "core/judge/job_judge.hpp"
#include "store/clickhouse/clickhouse_rules_sql.hpp"

namespace msmon {

std::string series_select(const std::string& db) {
    return "SELECT job, rank, kind, op, name, is_text, minState(op_ord) AS op_ord, minState(step) AS min_step, "
           "maxState(step) AS max_step FROM " +
           db + ".points GROUP BY job, rank, kind, op, name, is_text";
}

std::string step_ranks_select(const std::string& db) {
    return "SELECT job, step, rank, count() AS n FROM " + db + ".points GROUP BY job, step, rank";
}

std::string judge_rows_select(const std::string& db) {
    std::string kinds;
    for (const auto& k : JobJudge::kinds()) kinds += (kinds.empty() ? "" : ", ") + ch_quote(k);
    return "SELECT job, step, kind, vpp_stage, name, micro_step, rank, run, op, op_ord, tensor_ord, seq, value FROM " +
           db + ".points WHERE is_text = 0 AND kind IN (" + kinds + ")";
}

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
        "CREATE TABLE IF NOT EXISTS " + db +
            ".series (job String, rank Int32, kind String, op String, name String, is_text UInt8, "
            "op_ord AggregateFunction(min, UInt8), min_step AggregateFunction(min, Int64), "
            "max_step AggregateFunction(max, Int64)) "
            "ENGINE = AggregatingMergeTree() ORDER BY (job, kind, op, name, rank, is_text)",
        "CREATE MATERIALIZED VIEW IF NOT EXISTS " + db + ".series_feed TO " + db + ".series AS " + series_select(db),
        "CREATE TABLE IF NOT EXISTS " + db +
            ".rank_steps (job String, node String, rank Int32, kind String, op String, step Int64, acc Float64, "
            "n Int64, nans Int64, version UInt64) "
            "ENGINE = ReplacingMergeTree(version) ORDER BY (job, kind, op, step, rank)",
        "CREATE TABLE IF NOT EXISTS " + db +
            ".issues (job String, node String, spool UInt64, id Int64, path String, line Int64, "
            "reason String, excerpt String, shipped DateTime DEFAULT now()) "
            "ENGINE = ReplacingMergeTree() ORDER BY (job, node, spool, id)",
        "CREATE TABLE IF NOT EXISTS " + db +
            ".node_files (job String, node String, version UInt64, files UInt64, "
            "shipped DateTime DEFAULT now()) "
            "ENGINE = ReplacingMergeTree(version) ORDER BY (job, node)",
        "CREATE TABLE IF NOT EXISTS " + db +
            ".modules (job String, node String, generation UInt64, rank Int32, module String, "
            "structure String, stack String, shipped DateTime DEFAULT now()) "
            "ENGINE = ReplacingMergeTree() ORDER BY (job, node, generation, rank, module)",
        "CREATE TABLE IF NOT EXISTS " + db +
            ".step_ranks (job String, step Int64, rank Int32, n UInt64) "
            "ENGINE = SummingMergeTree() ORDER BY (job, step, rank)",
        "CREATE MATERIALIZED VIEW IF NOT EXISTS " + db + ".step_ranks_feed TO " + db + ".step_ranks AS " +
            step_ranks_select(db),
        "CREATE TABLE IF NOT EXISTS " + db +
            ".judge_rows (job String, step Int64, kind String, vpp_stage String, name String, micro_step Int64, "
            "rank Int32, run String, op String, op_ord UInt8, tensor_ord UInt64, seq UInt64, value Float64) "
            "ENGINE = ReplacingMergeTree(seq) ORDER BY (job, step, kind, name, rank, run, vpp_stage, micro_step, op)",
        "CREATE MATERIALIZED VIEW IF NOT EXISTS " + db + ".judge_rows_feed TO " + db + ".judge_rows AS " +
            judge_rows_select(db),
        "CREATE TABLE IF NOT EXISTS " + db +
            ".judged_steps (job String, step Int64, ranks UInt32, rank_list String, judge String, version UInt64, "
            "judged DateTime DEFAULT now()) ENGINE = ReplacingMergeTree(version) ORDER BY (job, step, judge)",
    };
}

void ensure_clickhouse_schema(const ClickHouseClient& client) {
    const std::string& db = client.target().database;
    client.query("CREATE DATABASE IF NOT EXISTS " + db);
    const auto exists = [&](const std::string& table) {
        return client.query("EXISTS TABLE " + db + "." + table).substr(0, 1) == "1";
    };
    const bool had_series = exists("series_feed"), had_rank_steps = exists("rank_steps"),
               had_step_ranks = exists("step_ranks_feed"), had_judge_rows = exists("judge_rows_feed");
    for (const auto& sql : clickhouse_ddl(db)) client.query(sql);
    // points written before the feed existed (a store made by an older msmon): summarised once. Rows an agent
    // inserts meanwhile are summarised twice, which min/max do not mind.
    if (!had_series) client.query("INSERT INTO " + db + ".series " + series_select(db));
    if (!had_step_ranks) client.query("INSERT INTO " + db + ".step_ranks " + step_ranks_select(db));
    if (!had_judge_rows) client.query("INSERT INTO " + db + ".judge_rows " + judge_rows_select(db));
    // Likewise the per-rank step aggregates, worked out from points with rank_block's rules, at version 0: what
    // an agent ships later replaces them.
    if (!had_rank_steps)
        client.query("INSERT INTO " + db + ".rank_steps SELECT job, node, rank, kind, op, step, " +
                     clickhouse_acc_by_op_sql() + ", countIf(NOT isNaN(value)), countIf(isNaN(value)), 0 FROM " + db +
                     ".points FINAL WHERE is_text = 0 GROUP BY job, node, rank, kind, op, step");
}

}  // namespace msmon
