// Collects the per-rank gauges of core/export/prom_textfile.hpp from a local store, with a few small queries.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "core/export/prom_textfile.hpp"
#include "store/sqlite_handle.hpp"

namespace msmon {

class PromGaugeCollector {
public:
    PromGaugeCollector(const std::string& store_path, std::string job, std::string node);
    // The gauges now. seconds_since_step counts from when this collector first saw each rank's latest step, or
    // from the time `seed` gives for that step (what the previous agent's file said).
    JobGauges collect();
    void seed(const std::map<int, StepSeen>& previous) { seeded_ = previous; }

private:
    Connection conn_;
    std::string job_, node_;
    std::map<int, std::pair<std::int64_t, std::chrono::steady_clock::time_point>> step_seen_;
    std::map<int, StepSeen> seeded_;
};

}  // namespace msmon
