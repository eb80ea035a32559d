// MindFormers relaunches as runs of their own. A relaunched job appends to the same logs (and writes a new
// TensorBoard event file); what it writes goes to a run named by the relaunch's start time ("Running MindFormers
// in ..." as its log line says it), beside the first launch's run: `<first run's path>#launch <time>`. Its steps
// then form a segment of their own, so a step trained again after resuming from a checkpoint keeps both values.
#pragma once

#include <cstdint>
#include <string>

#include "core/model/key_registry.hpp"

namespace msmon {

// The run of launch `label` of the job whose first launch wrote to `first_run` ("": `first_run` itself).
std::int64_t launch_run(KeyRegistry& keys, std::int64_t first_run, const std::string& label, RecordBatch& batch);

// The latest relaunch of that job known (stored, or found in this session) that began at or before `ms` (ms since
// the epoch), or "" (the first launch).
std::string launch_at(const KeyRegistry& keys, std::int64_t first_run, std::int64_t ms);

}  // namespace msmon
