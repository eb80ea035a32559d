// A new incident as one run of the --on-incident command: its JSON on stdin, its step and rank as numbers in
// MSMON_STEP and MSMON_RANK (nothing textual from the monitored files reaches the environment).
#pragma once

#include <string>

#include "core/detect/new_incidents.hpp"
#include "core/notify/hook_runner.hpp"

namespace msmon {

inline HookEvent incident_hook_event(const std::vector<AnomalyRecord>& anomalies, const Incident& incident,
                                     const std::vector<std::string>& job_folders) {
    const AnomalyRecord& origin = anomalies[incident.origin];
    HookEvent event;
    event.input = incident_json(anomalies, incident, job_folders) + "\n";
    event.env = {{"MSMON_EVENT", "incident"},
                 {"MSMON_STEP", std::to_string(origin.step)},
                 {"MSMON_RANK", std::to_string(origin.rank)}};
    return event;
}

// The variables every run gets: the job folders watched (the first one; MSMON_JOBS: how many) and the store.
inline EnvVars hook_base_env(const std::vector<std::string>& job_folders, const std::string& store) {
    return {{"MSMON_JOB", job_folders.empty() ? std::string() : job_folders.front()},
            {"MSMON_JOBS", std::to_string(job_folders.size())},
            {"MSMON_STORE", store}};
}

}  // namespace msmon
