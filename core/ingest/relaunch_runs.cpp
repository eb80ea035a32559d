#include "core/ingest/relaunch_runs.hpp"

#include "core/parse/mindformers_log.hpp"

namespace msmon {

namespace {

constexpr std::string_view kLaunchMark = "#launch ";

}  // namespace

std::int64_t launch_run(KeyRegistry& keys, std::int64_t first_run, const std::string& label, RecordBatch& batch) {
    const RunInfo* first = keys.run(first_run);
    if (label.empty() || !first) return first_run;
    RunInfo proto;
    proto.rank = first->rank;
    proto.format = first->format;
    proto.path = first->path + std::string(kLaunchMark) + label;
    proto.time_label = label;
    return keys.run_id(proto, batch);
}

std::string launch_at(const KeyRegistry& keys, std::int64_t first_run, std::int64_t ms) {
    const RunInfo* first = keys.run(first_run);
    if (!first) return {};
    std::string best;
    std::int64_t best_ms = -1;
    for (const RunInfo* r : keys.runs_with_prefix(first->path + std::string(kLaunchMark))) {
        const auto t = log_time_ms(r->time_label);
        if (t && *t <= ms && *t > best_ms) {
            best_ms = *t;
            best = r->time_label;
        }
    }
    return best;
}

}  // namespace msmon
