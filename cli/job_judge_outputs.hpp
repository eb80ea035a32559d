// What the job-level judge tells beyond ClickHouse: --on-incident runs the user's command once per new incident of
// the whole job (the agents' and the judge's findings merged, as every reader over ClickHouse sees them), and
// --prom-textfile writes per-rank gauges as the judge sees the job (every node's ranks: a stall across nodes, the
// judge's findings by rule) into DIR/msmon-judge.prom, with the agents' metric names and node="judge".
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/model/anomaly_record.hpp"
#include "store/clickhouse/clickhouse_client.hpp"

namespace msmon {

struct JudgeOutputOptions {
    ClickHouseTarget target;
    std::string job;
    std::string on_incident;  // empty: none
    std::chrono::milliseconds on_incident_timeout{20000};
    std::string prom_dir;  // empty: none
};

class JudgeOutputs {
public:
    explicit JudgeOutputs(JudgeOutputOptions options);
    ~JudgeOutputs();
    // Before the first step is judged: the incidents already there are known, not new.
    void start();
    // Findings the judge wrote.
    void found(const std::vector<AnomalyRecord>& anomalies);
    // Once per pass: each rank's newest step as the judge sees it. Writes the gauges and looks for new incidents,
    // each at most once a second.
    void tick(const std::map<int, std::int64_t>& newest);
    // Stopping: what waits to settle is announced as it stands; waits a little for a running command.
    void finish(bool wait_for_commands);

private:
    using Clock = std::chrono::steady_clock;
    void announce(Clock::time_point now);
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace msmon
