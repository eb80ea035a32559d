// The ground truth of a simulated run (`msmon simulate --truth FILE.json`): per planted fault, where a detector
// should place its origin — kind, step, rank (-1: every rank), kind_of_tensor (the CSV prefix where it shows
// first, or msmon's derived kind: derived.update_ratio for a learning rate), module (the tensor's name as the CSV
// writes it; "" when every tensor of that kind is hit alike and no single one can be told apart) — and a
// description. A detection benchmark compares the top incident to it.
#pragma once

#include <cstdint>
#include <string>

#include "core/sim/fault_schedule.hpp"
#include "core/sim/msprobe_simulator.hpp"

namespace msmon {

// `options` as the msprobe simulator runs them; `stop_step` where MindFormers' data skip ends the job, or -1.
std::string fault_truth_json(const SimOptions& options, std::int64_t stop_step, std::string& error);

}  // namespace msmon
