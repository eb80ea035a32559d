// New incidents and their command (see the header).
#include "core/notify/incident_hooks.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "core/notify/incident_hook.hpp"

namespace msmon {

std::vector<std::string> job_folders_of(const std::vector<std::string>& roots) {
    std::vector<std::string> out;
    for (const std::string& root : roots) {
        std::error_code ec;
        const auto abs = std::filesystem::absolute(root, ec);
        out.push_back(ec ? root : abs.lexically_normal().string());
    }
    return out;
}

IncidentHooks::IncidentHooks(Clock::duration settle, IncidentCommand command,
                             std::function<void(const std::string&)> said)
    : news_(settle), job_folders_(std::move(command.job_folders)) {
    if (!command.command.empty())
        runner_ = std::make_unique<HookRunner>(
            HookOptions{command.command, command.timeout, 64, hook_base_env(job_folders_, command.store)},
            std::move(said));
}

IncidentHooks::~IncidentHooks() = default;

void IncidentHooks::announce(const std::vector<AnomalyRecord>& anomalies, const Incident& incident) {
    spdlog::info("new incident: {}", incident_headline(anomalies, incident));
    if (runner_) runner_->submit(incident_hook_event(anomalies, incident, job_folders_));
}

void IncidentHooks::finish(std::chrono::milliseconds limit) {
    if (runner_) runner_->finish(limit);
}

}  // namespace msmon
