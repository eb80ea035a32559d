// The node agent's parts (see the header).
#include "store/agent/node_agent.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/export/prom_textfile.hpp"
#include "core/files/input_file.hpp"
#include "core/files/input_limits.hpp"
#include "core/signals/stop_request.hpp"

namespace msmon {

NodeAgent::NodeAgent(AgentOptions options, std::function<void(const std::string&)> say)
    : options_(std::move(options)), say_(std::move(say)) {
    if (options_.sink) shipper_ = std::make_unique<ClickHouseShipper>(options_.db, *options_.sink);
    if (!options_.prom_dir.empty()) {
        gauges_ = std::make_unique<PromGaugeCollector>(options_.db, options_.job, options_.node);
        // A restart: keep counting stalls from the file written before. Read as any input is (no link, no FIFO,
        // within a bound): the folder may be shared, and the file is only a hint.
        std::string previous, why;
        bool missing = false;
        if (read_input_file(options_.prom_dir + "/msmon.prom", InputLinks::refuse, input_limits().prom_file,
                            kPromFileLimit, previous, why, &missing))
            gauges_->seed(read_step_times(previous, options_.job, options_.node));
        else if (!missing) say_("msmon ingest: --prom-textfile: " + why + "; not read (stall times start again)");
    }
    // --on-incident: incidents already in the store are known; each new one runs the command once. Following, a new
    // incident settles before its command runs (its origin may arrive after its first symptom); a one-shot ingest
    // has read everything.
    if (!options_.on_incident.empty()) {
        hook_reader_ = open_sqlite_reader(options_.db, options_.access);
        hook_index_.update(*hook_reader_);
        hooks_ = std::make_unique<IncidentHooks>(
            options_.follow ? NewIncidents::Clock::duration(kIncidentSettle) : NewIncidents::Clock::duration::zero(),
            IncidentCommand{options_.on_incident, options_.on_incident_timeout, job_folders_of(options_.roots),
                            options_.db},
            [this](const std::string& msg) { say_("msmon: " + msg); });
        hooks_->prime(hook_index_.anomalies());
    }
}

NodeAgent::~NodeAgent() {
    // The workers first: their tasks use the parts below.
    ship_worker_.reset();
    prom_worker_.reset();
    hook_worker_.reset();
}

void NodeAgent::start_following() {
    if (hooks_)
        hook_worker_ = std::make_unique<PeriodicWorker>(
            [this] { return announce_incidents(); }, std::chrono::milliseconds(1000), std::chrono::milliseconds(2000));
    if (shipper_)
        ship_worker_ =
            std::make_unique<PeriodicWorker>([this] { return ship(); }, options_.sink_interval,
                                             std::max(options_.sink_interval, std::chrono::milliseconds(2000)));
    if (gauges_)
        prom_worker_ = std::make_unique<PeriodicWorker>(
            [this] { return write_gauges(); }, std::chrono::milliseconds(1000), std::chrono::milliseconds(1000));
}

void NodeAgent::wake() {
    if (ship_worker_) ship_worker_->wake();
    if (prom_worker_) prom_worker_->wake();
    if (hook_worker_) hook_worker_->wake();
}

void NodeAgent::finish(bool interrupted) {
    // Stopping a worker runs its task once more: the last rows ship, the last gauges are written.
    if (ship_worker_) ship_worker_->stop();
    if (prom_worker_) prom_worker_->stop();
    if (hook_worker_) {
        hook_worker_->stop();
        flush_pending_ = true;
        announce_incidents();
    }
    if (!options_.follow) {
        if (shipper_ && !interrupted) ship();
        if (gauges_) write_gauges();
        if (hooks_ && !interrupted) announce_incidents();
    }
    // One-shot: every queued run gets its turn (each ends at its timeout at the latest; at most 64 wait). Stopped
    // (--follow, a service being stopped, or a one-shot interrupted): the running one gets what is left of the
    // stop's grace (0.8 s from the signal), then is ended with all it started; the rest are dropped and counted. A
    // signal ends msmon within 2 s.
    if (hooks_)
        hooks_->finish(interrupted || options_.follow ? stop_grace_left()
                                                      : options_.on_incident_timeout * 65 + std::chrono::seconds(65));
}

bool NodeAgent::ship_ok() const {
    std::lock_guard lock(mu_);
    return ship_ok_;
}

std::string NodeAgent::ship_error() const {
    std::lock_guard lock(mu_);
    return ship_error_;
}

std::uint64_t NodeAgent::gauge_write_failures() const {
    std::lock_guard lock(mu_);
    return prom_failures_.failures();
}

std::string NodeAgent::gauge_last_error() const {
    std::lock_guard lock(mu_);
    return prom_failures_.last_error();
}

bool NodeAgent::ship() {
    std::string e;
    const bool ok = shipper_->ship_pending(e);
    std::lock_guard lock(mu_);
    if (ok != ship_ok_ || (!ok && e != ship_error_)) {
        const std::string msg = ok ? "ClickHouse takes rows again: the spool is draining, nothing was lost"
                                   : "ClickHouse: " + e + " (rows wait in the local store and ship later)";
        (ok ? spdlog::info("{}", msg) : spdlog::warn("{}", msg));
        say_("msmon: " + msg);
    }
    ship_ok_ = ok;
    ship_error_ = ok ? "" : e;
    return ok;
}

// A failed write of the gauges is said when it starts failing (and when it works again), counted, and in --json:
// node_exporter serving a stale file looks like a healthy job.
bool NodeAgent::write_gauges() {
    std::string e;
    try {
        if (write_textfile_atomic(options_.prom_dir, "msmon.prom", render_prom_text(gauges_->collect()), e)) e.clear();
        else if (e.empty()) e = "the write failed";
    } catch (const std::exception& x) {
        e = x.what();
    }
    std::lock_guard lock(mu_);
    if (!e.empty()) spdlog::warn("--prom-textfile: {}", e);
    if (const std::string say = prom_failures_.outcome(e); !say.empty()) say_("msmon ingest: " + say);
    return true;
}

bool NodeAgent::announce_incidents() {
    try {
        // Where reading stands, taken before the store is read: what it says is in the store read after it.
        const std::optional<ReadProgress> progress =
            options_.read_progress ? options_.read_progress() : std::optional<ReadProgress>();
        if (!hook_index_.update(*hook_reader_) && !hooks_->pending()) return true;
        if (!hook_index_.grouped()) {
            if (!warned_ungrouped_) {
                const std::string msg = "--on-incident: the store holds more than " +
                                        std::to_string(hook_index_.max_anomalies()) +
                                        " anomalies; they are not grouped into incidents, and no command runs";
                spdlog::warn("{}", msg);
                say_("msmon: " + msg);
            }
            warned_ungrouped_ = true;
            return true;
        }
        const auto set = hook_index_.set();
        const auto now = NewIncidents::Clock::now() + (flush_pending_ ? std::chrono::hours(1) : std::chrono::hours(0));
        for (const std::size_t i :
             hooks_->take(set->anomalies, set->incidents, now, progress && !flush_pending_ ? &*progress : nullptr))
            hooks_->announce(set->anomalies, set->incidents[i]);
    } catch (const std::exception& e) {
        spdlog::warn("--on-incident: reading the store's incidents: {}", e.what());
        return false;
    }
    return true;
}

}  // namespace msmon
