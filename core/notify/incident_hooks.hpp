// New incidents, once each, after they settle, and the --on-incident command run for each: what a following
// `msmon ingest` (the node agent) and msmon-tui share. The incidents already known when watching begins are
// primed, never announced; a new one waits `settle` (its origin may arrive after its first symptom) and until
// reading has passed it (ReadProgress), then is taken once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/detect/incidents.hpp"
#include "core/detect/new_incidents.hpp"
#include "core/notify/hook_runner.hpp"

namespace msmon {

// How long a new incident waits while following a job, in case its origin arrives after its first symptom.
inline constexpr std::chrono::seconds kIncidentSettle{3};

struct IncidentCommand {
    std::string command;  // run as /bin/sh -c COMMAND; empty: no command
    std::chrono::milliseconds timeout{20000};
    std::vector<std::string> job_folders;  // absolute; MSMON_JOB is the first
    std::string store;                     // MSMON_STORE
};

// The job folders as the command is told them: absolute, normalised (a folder given as "." is named).
std::vector<std::string> job_folders_of(const std::vector<std::string>& roots);

class IncidentHooks {
public:
    using Clock = NewIncidents::Clock;
    // `said`: what the user should see of the command (it failed, hung, was dropped), from the runner's thread.
    IncidentHooks(Clock::duration settle, IncidentCommand command, std::function<void(const std::string&)> said);
    // Ends the command still running at once (finish() first to give it time).
    ~IncidentHooks();

    // Every key anomaly of `anomalies` is known: never announced.
    void prime(const std::vector<AnomalyRecord>& anomalies) { news_.prime(anomalies); }
    // The incidents new and settled by `now` (indices into `incidents`), most severe first; each is taken once.
    // `progress`: where reading stands (null: the settle time alone).
    std::vector<std::size_t> take(const std::vector<AnomalyRecord>& anomalies, const std::vector<Incident>& incidents,
                                  Clock::time_point now, const ReadProgress* progress) {
        return news_.take(anomalies, incidents, now, progress);
    }
    // Logs the incident's headline and runs the command for it (if there is one).
    void announce(const std::vector<AnomalyRecord>& anomalies, const Incident& incident);
    // New incidents wait to settle: take() again after a while even when nothing else changed.
    bool pending() const { return news_.pending(); }
    std::optional<Clock::time_point> next_due() const { return news_.next_due(); }

    bool has_command() const { return runner_ != nullptr; }
    // Runs of the command so far; null without a command.
    const HookCounters* counters() const { return runner_ ? &runner_->counters() : nullptr; }
    // The runs still waiting get up to `limit` in all; the one running past it is ended with all it started.
    void finish(std::chrono::milliseconds limit);

private:
    NewIncidents news_;
    std::vector<std::string> job_folders_;
    std::unique_ptr<HookRunner> runner_;
};

}  // namespace msmon
