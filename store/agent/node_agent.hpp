// A node's agent beside its ingest: what it does with what is stored, each part on its own thread, woken after
// each commit: shipping to ClickHouse (--sink), the Prometheus gauges file (--prom-textfile), and the
// --on-incident command for each new incident (after it settles). A one-shot ingest runs each part once at the end.
// `msmon ingest` assembles it; msmon-tui runs the incident part itself (core/notify/incident_hooks.hpp).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/detect/new_incidents.hpp"
#include "core/export/write_failures.hpp"
#include "core/ingest/periodic_worker.hpp"
#include "core/notify/incident_hooks.hpp"
#include "store/clickhouse/clickhouse_sink.hpp"
#include "store/incident_index.hpp"
#include "store/prom_gauges.hpp"
#include "store/reader.hpp"
#include "store/store_location.hpp"

namespace msmon {

struct AgentOptions {
    std::string db;  // the node's store
    StoreAccess access;
    bool follow = false;
    std::vector<std::string> roots;  // the job folders read (the command is told them)
    std::optional<ShipperOptions> sink;
    std::chrono::milliseconds sink_interval{1000};
    std::string prom_dir;  // empty: no gauges
    std::string job, node;
    std::string on_incident;  // empty: no command
    std::chrono::milliseconds on_incident_timeout{20000};
    // Where the ingest's reading stands (an incident is announced once its origin can no longer move).
    std::function<std::optional<ReadProgress>()> read_progress;
};

class NodeAgent {
public:
    // `say`: a line for the person running it (stderr), from any of the agent's threads. Throws std::exception when
    // a part cannot start (the store cannot be read, ClickHouse's spool cannot be opened).
    NodeAgent(AgentOptions options, std::function<void(const std::string&)> say);
    ~NodeAgent();

    // Following: each part's thread, woken by wake() (after each commit) and at least every second or two.
    void start_following();
    void wake();
    // The ingest ended. Each part runs once more: the last rows ship, the last gauges are written, incidents still
    // settling are announced as they stand. `interrupted`: a one-shot ingest cut short by a signal (nothing more
    // ships and no command runs: the user asked it to stop). A running command gets what is left of the stop's grace
    // when stopped, or every queued run its turn after a one-shot ingest.
    void finish(bool interrupted);

    bool ships() const { return shipper_ != nullptr; }
    bool ship_ok() const;
    std::string ship_error() const;
    const ShipperCounters* shipped() const { return shipper_ ? &shipper_->counters() : nullptr; }
    const HookCounters* command_runs() const { return hooks_ ? hooks_->counters() : nullptr; }
    bool writes_gauges() const { return gauges_ != nullptr; }
    std::uint64_t gauge_write_failures() const;
    std::string gauge_last_error() const;

private:
    bool ship();
    bool write_gauges();
    bool announce_incidents();

    AgentOptions options_;
    std::function<void(const std::string&)> say_;
    mutable std::mutex mu_;  // ship_ok_, ship_error_, prom_failures_
    std::unique_ptr<ClickHouseShipper> shipper_;
    bool ship_ok_ = true;
    std::string ship_error_;
    std::unique_ptr<PromGaugeCollector> gauges_;
    WriteFailures prom_failures_{"--prom-textfile", "the gauges are not written"};
    std::unique_ptr<IncidentHooks> hooks_;
    std::unique_ptr<Reader> hook_reader_;
    IncidentIndex hook_index_;
    bool warned_ungrouped_ = false;
    bool flush_pending_ = false;  // stopping: what still waits to settle is announced as it stands
    std::unique_ptr<PeriodicWorker> ship_worker_, prom_worker_, hook_worker_;
};

}  // namespace msmon
