// Which of a run's incidents are new: what rings the TUI's bell and runs `--on-incident` commands, once per
// incident. Incidents are grouped again from every anomaly each time the store changes, so an incident has no
// id of its own: it is known by its key anomalies, the members scored at least kIncidentScore. An incident is
// new when it has key anomalies and none of them belonged to an incident already announced (or was in the store
// when watching began); an incident that grows, or two that merge, are not new again.
// While following a job an incident is announced only once it has settled: its first sight is often a symptom
// (the log's global-norm line at the step end arrives before the CSV rows of the tensor where a NaN began), and
// the message should name where it began. So a new incident waits `settle` from its first sight, then is
// announced as it stands (its origin regrouped with everything that arrived meanwhile). Given where reading stands
// (ReadProgress), it also waits until what could still come before its origin is in: ingest read everything written
// by the end of the settle, holds no finding of the incident's step or earlier, and every rank reached that step
// (a rank writing seconds behind the others would otherwise leave the others' symptoms as the origin). At most
// kMaxSettle: a rank that never gets there does not silence the incident.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/detect/incidents.hpp"

namespace msmon {

inline constexpr std::chrono::seconds kMaxSettle{30};

// Where reading stands, for whether an incident's origin can still move to something earlier.
struct ReadProgress {
    std::chrono::steady_clock::time_point quiet_at{};  // every change made before it was read and committed
    std::optional<std::int64_t> held_from_step;        // the earliest step of a finding held for its rank's next step
    std::int64_t all_ranks_at = INT64_MAX;             // the slowest rank's newest step
};

class NewIncidents {
public:
    using Clock = std::chrono::steady_clock;
    explicit NewIncidents(Clock::duration settle = Clock::duration::zero()) : settle_(settle) {}
    // Takes every key anomaly of `anomalies` as already announced: what the store held when watching began.
    void prime(const std::vector<AnomalyRecord>& anomalies);
    // The incidents (indices into `incidents`) that are new and have settled by `now`, most severe first; their key
    // anomalies count as announced from now on.
    // `progress`: where reading stands (following a job); null: the settle time alone.
    std::vector<std::size_t> take(const std::vector<AnomalyRecord>& anomalies, const std::vector<Incident>& incidents,
                                  Clock::time_point now = Clock::now(), const ReadProgress* progress = nullptr);
    std::size_t announced() const { return seen_.size(); }
    // New incidents wait to settle: call take() again after a while even if nothing else changed.
    bool pending() const { return !pending_.empty(); }
    // When the first incident waiting to settle may be announced; nullopt when none waits.
    std::optional<Clock::time_point> next_due() const;

private:
    Clock::duration settle_;
    std::unordered_set<std::string> seen_;                        // identity() of every key anomaly announced
    std::unordered_map<std::string, Clock::time_point> pending_;  // key anomalies of new incidents: first seen
    // Settled in time but waiting for reading (ReadProgress): looked at again then.
    static constexpr std::chrono::milliseconds kProgressRetry{500};
    Clock::time_point retry_at_{};
};

// What identifies one stored anomaly across regroupings: where it is and which rule fired.
std::string anomaly_identity(const AnomalyRecord& a);

// One incident as the --on-incident command reads it on stdin: a JSON object (ASCII only; text from the
// monitored files is escaped by JSON, never interpreted) with the origin's step, rank, kind, module, op, rule,
// score, value and message, the incident's steps, ranks and size, and the job folders watched.
std::string incident_json(const std::vector<AnomalyRecord>& anomalies, const Incident& incident,
                          const std::vector<std::string>& job_folders);

// What the origin's value is, for a person: "norm nan", "nans 1" (an op's value), or the value alone for a scalar
// ("loss 9.5" is "9.5 in loss").
std::string origin_value_text(const AnomalyRecord& origin);

// One line for a person (a desktop notification, a log line):
// "norm nan in actv at step 11, rank 3, <module> (NonFinite, 4 ranks)".
// Control bytes from the monitored files are dropped; at most `max_bytes` bytes, cut on a character boundary.
std::string incident_headline(const std::vector<AnomalyRecord>& anomalies, const Incident& incident,
                              std::size_t max_bytes = 200);

}  // namespace msmon
