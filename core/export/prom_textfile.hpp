// Per-rank gauges in Prometheus' text exposition format, written atomically for node_exporter's textfile
// collector (it must never read a half-written file: temp file in the same folder, fsync, rename).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace msmon {

struct RankGauges {
    int rank = 0;
    std::optional<std::int64_t> last_step;
    std::optional<double> seconds_since_step;  // since this agent saw last_step arrive
    std::optional<double> loss;
    std::optional<double> global_norm;
    std::map<std::string, std::int64_t> anomalies_by_rule;
    std::int64_t checkpoints = 0;
    std::int64_t unhealthy_checkpoints = 0;
    std::optional<bool> latest_checkpoint_healthy;
};

struct JobGauges {
    std::string job;
    std::string node;
    std::vector<RankGauges> ranks;
    double updated_unix_seconds = 0;
};

// The exposition text: HELP and TYPE once per metric, then one sample per rank (labels job, node, rank[,
// rule]).
std::string render_prom_text(const JobGauges& gauges);

// When each rank's latest step arrived (Unix time), as a file render_prom_text wrote for this job and node says:
// its updated time minus the rank's seconds since its last step. A restarted agent carries on counting from
// there instead of from zero, so a rank that stalled before the restart still alerts on time.
struct StepSeen {
    std::int64_t step = 0;
    double unix_seconds = 0;
};
std::map<int, StepSeen> read_step_times(const std::string& text, const std::string& job, const std::string& node);

// Writes `text` to DIR/NAME atomically. Returns false with `error` on failure.
bool write_textfile_atomic(const std::string& dir, const std::string& name, const std::string& text,
                           std::string& error);

}  // namespace msmon
