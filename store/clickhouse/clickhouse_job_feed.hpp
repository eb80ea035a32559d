// What the job-level judge reads from and writes to ClickHouse: which ranks wrote which steps (step_ranks), a
// step's rows with the ranks' values side by side (grouped in SQL per tensor and step), the anomalies it finds
// (into anomalies, as node kJudgeNode) and the steps it judged (judged_steps).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/judge/job_row.hpp"
#include "core/model/anomaly_record.hpp"
#include "store/clickhouse/clickhouse_client.hpp"

namespace msmon {

struct StepRankCount {
    std::int64_t step = 0;
    int rank = 0;
    std::uint64_t values = 0;
};

class ClickHouseJobFeed {
public:
    // Creates the tables if missing.
    ClickHouseJobFeed(ClickHouseTarget target, std::string job);

    // Every (step, rank) the job holds from `from_step` on, step-sorted. Not checked: that a rank counted here has
    // its rows in judge_rows already. Both are filled by views of the same INSERT; were step_ranks_feed filled
    // first and the step read in between, the rank would be judged there without its rows.
    std::vector<StepRankCount> step_ranks(std::int64_t from_step) const;
    // The rows of `kinds` at steps [first, last], every rank's.
    std::vector<JobRow> rows(const std::vector<std::string>& kinds, std::int64_t first, std::int64_t last) const;
    // Writes the judge's anomalies: each keyed by its origin (rank, step, rule, tensor), so that any number of
    // judges write each one once.
    void write_anomalies(const std::vector<AnomalyRecord>& anomalies) const;
    // Records that `step` was judged with `ranks` (ascending), by `judge` (its name, for people).
    void write_judged(std::int64_t step, const std::vector<int>& ranks, const std::string& judge) const;
    // The ranks each step from `from_step` on was judged with, by any judge.
    std::map<std::int64_t, std::vector<int>> judged_ranks(std::int64_t from_step) const;
    // The highest step judged for the job, by any judge.
    std::optional<std::int64_t> judged_through() const;
    const std::string& job() const { return job_; }

private:
    std::string rows_of(const std::string& sql) const { return client_.query(sql + " FORMAT RowBinary"); }
    ClickHouseClient client_;
    std::string job_, db_;
    // rows(): run folders by their cityHash64, op names by (kind, place in the row), learned as they appear.
    mutable std::unordered_map<std::uint64_t, std::string> run_names_;
    mutable std::map<std::pair<std::string, std::uint8_t>, std::string> op_names_;
    mutable bool ops_by_name_ = false;  // a kind's ops differ between layouts: sent whole
};

// The id the judge gives `a`: kJudgeIdBase plus a hash of its key (clickhouse_schema.hpp).
std::int64_t judge_anomaly_id(const AnomalyRecord& a);

}  // namespace msmon
