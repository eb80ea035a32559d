// New incidents from the merged view over ClickHouse (IncidentIndex + NewIncidents, as msmon ingest --on-incident
// does), and gauges rendered by core/export/prom_textfile.
#include "cli/job_judge_outputs.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>

#include "core/detect/new_incidents.hpp"
#include "core/export/prom_textfile.hpp"
#include "core/export/write_failures.hpp"
#include "core/notify/incident_hook.hpp"
#include "core/signals/stop_request.hpp"
#include "core/text/display_escape.hpp"
#include "store/clickhouse/clickhouse_reader.hpp"
#include "store/incident_index.hpp"

namespace msmon {

namespace {

double unix_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

struct JudgeOutputs::State {
    JudgeOutputOptions o;
    std::unique_ptr<HookRunner> hook;
    std::unique_ptr<Reader> reader;
    IncidentIndex index;
    NewIncidents news{std::chrono::seconds(3)};  // an origin found late (a late rank) may still come
    bool primed = false;
    Clock::time_point next_hook{}, next_prom{};
    WriteFailures prom_failures{"--prom-textfile", "the judge's gauges are not written"};
    std::map<int, std::map<std::string, std::int64_t>> by_rule;           // rank → rule → findings
    std::map<int, std::pair<std::int64_t, Clock::time_point>> step_seen;  // rank → (newest step, when seen)
};

JudgeOutputs::JudgeOutputs(JudgeOutputOptions options) : state_(std::make_unique<State>()) {
    state_->o = std::move(options);
    if (!state_->o.on_incident.empty())
        state_->hook = std::make_unique<HookRunner>(
            HookOptions{state_->o.on_incident,
                        state_->o.on_incident_timeout,
                        64,
                        {{"MSMON_JOB", state_->o.job}, {"MSMON_JOBS", "1"}, {"MSMON_STORE", state_->o.target.text()}}},
            [](const std::string& msg) {  // a command that failed, hung or was dropped (logged by the runner too)
                std::fprintf(stderr, "msmon judge: %s\n", escape_for_terminal(msg).c_str());
            });
}

JudgeOutputs::~JudgeOutputs() = default;

void JudgeOutputs::start() {
    State& s = *state_;
    if (!s.hook || s.primed) return;
    try {
        s.reader = open_clickhouse_reader(s.o.target, s.o.job);
        s.index.update(*s.reader);
        s.news.prime(s.index.anomalies());
        s.primed = true;
    } catch (const std::exception& e) {
        spdlog::warn("judge: --on-incident: reading the job's incidents: {}", e.what());
        s.reader.reset();
    }
}

void JudgeOutputs::announce(Clock::time_point now) {
    State& s = *state_;
    try {
        if (!s.reader) s.reader = open_clickhouse_reader(s.o.target, s.o.job);
        const bool changed = s.index.update(*s.reader);
        if (!s.primed) {
            s.news.prime(s.index.anomalies());
            s.primed = true;
            return;
        }
        if ((!changed && !s.news.pending()) || !s.index.grouped()) return;
        const auto set = s.index.set();
        for (const std::size_t i : s.news.take(set->anomalies, set->incidents, now, nullptr)) {
            spdlog::info("judge: new incident: {}", incident_headline(set->anomalies, set->incidents[i]));
            s.hook->submit(incident_hook_event(set->anomalies, set->incidents[i], {s.o.job}));
        }
    } catch (const std::exception& e) {
        spdlog::warn("judge: --on-incident: reading the job's incidents: {}", e.what());
        s.reader.reset();
    }
}

void JudgeOutputs::found(const std::vector<AnomalyRecord>& anomalies) {
    for (const auto& a : anomalies) ++state_->by_rule[a.rank][a.rule];
}

void JudgeOutputs::tick(const std::map<int, std::int64_t>& newest) {
    State& s = *state_;
    const auto now = Clock::now();
    for (const auto& [rank, step] : newest) {
        auto [seen, added] = s.step_seen.try_emplace(rank, step, now);
        if (!added && step != seen->second.first) seen->second = {step, now};
    }
    if (s.hook && now >= s.next_hook) {
        s.next_hook = now + std::chrono::seconds(1);
        announce(now);
    }
    if (!s.o.prom_dir.empty() && now >= s.next_prom) {
        s.next_prom = now + std::chrono::seconds(1);
        JobGauges g;
        g.job = s.o.job;
        g.node = "judge";
        g.updated_unix_seconds = unix_now();
        for (const auto& [rank, seen] : s.step_seen) {
            RankGauges r;
            r.rank = rank;
            r.last_step = seen.first;
            r.seconds_since_step = std::chrono::duration<double>(now - seen.second).count();
            if (const auto rules = s.by_rule.find(rank); rules != s.by_rule.end()) r.anomalies_by_rule = rules->second;
            g.ranks.push_back(std::move(r));
        }
        std::string error;
        if (write_textfile_atomic(s.o.prom_dir, "msmon-judge.prom", render_prom_text(g), error)) error.clear();
        else if (error.empty()) error = "the write failed";
        if (!error.empty()) spdlog::warn("judge: --prom-textfile: {}", error);
        if (const std::string say = s.prom_failures.outcome(error); !say.empty())
            std::fprintf(stderr, "msmon judge: %s\n", escape_for_terminal(say).c_str());
    }
}

void JudgeOutputs::finish(bool wait_for_commands) {
    if (!state_->hook) return;
    announce(Clock::now() + std::chrono::hours(1));
    // --once: every command gets its turn; stopped (a service): the running one gets what is left of the stop's
    // grace (0.8 s from the signal), then is ended with all it started: the judge is gone within 2 s.
    state_->hook->finish(wait_for_commands ? state_->o.on_incident_timeout * 65 + std::chrono::seconds(65)
                                           : stop_grace_left());
}

}  // namespace msmon
