// Which of a run's incidents are new: what rings the TUI's bell and runs `--on-incident` commands, once per
// incident. Incidents are grouped again from every anomaly each time the store changes, so an incident has no
// id of its own: it is known by its key anomalies, the members scored at least kIncidentScore. An incident is
// new when it has key anomalies and none of them belonged to an incident already announced (or was in the store
// when watching began); an incident that grows, or two that merge, are not new again.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/detect/incidents.hpp"

namespace msmon {

class NewIncidents {
public:
    // Takes every key anomaly of `anomalies` as already announced: what the store held when watching began.
    void prime(const std::vector<AnomalyRecord>& anomalies);
    // The incidents (indices into `incidents`) that are new since the last call, most severe first; their key
    // anomalies count as announced from now on.
    std::vector<std::size_t> take(const std::vector<AnomalyRecord>& anomalies, const std::vector<Incident>& incidents);
    std::size_t announced() const { return seen_.size(); }

private:
    std::unordered_set<std::string> seen_;  // identity() of every key anomaly announced
};

// What identifies one stored anomaly across regroupings: where it is and which rule fired.
std::string anomaly_identity(const AnomalyRecord& a);

// One incident as the --on-incident command reads it on stdin: a JSON object (ASCII only; text from the
// monitored files is escaped by JSON, never interpreted) with the origin's step, rank, kind, module, op, rule,
// score, value and message, the incident's steps, ranks and size, and the job folders watched.
std::string incident_json(const std::vector<AnomalyRecord>& anomalies, const Incident& incident,
                          const std::vector<std::string>& job_folders);

// One line for a person (a desktop notification, a log line):
// "nan in actv at step 11, rank 3, <module> (NonFinite, 4 ranks)".
// Control bytes from the monitored files are dropped; at most `max_bytes` bytes, cut on a character boundary.
std::string incident_headline(const std::vector<AnomalyRecord>& anomalies, const Incident& incident,
                              std::size_t max_bytes = 200);

}  // namespace msmon
