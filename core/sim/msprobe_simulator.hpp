// Writes a realistic msprobe monitor run (per-rank folders of statistics CSVs) in the real format, optionally
// paced so that it runs live.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/sim/fault_plan.hpp"

namespace msmon {

struct SimOptions {
    std::string outdir;  // the job folder; the monitor root is <outdir>/monitor_output
    int ranks = 8;
    int first_rank = 0;  // ranks first_rank .. first_rank + ranks - 1 (one node of a multi-node job)
    // Tensor-parallel size: ranks are data-parallel × tensor-parallel in Megatron's order (global rank g holds shard
    // g % tp; ranks holding the same shard are its data-parallel replicas and print the same weights, reduced
    // gradients and moments; shards differ). 1: every rank is a replica of every other.
    int tp = 1;
    std::int64_t steps = 100;
    std::int64_t first_step = 0;
    int step_ms = 0;  // pause between steps (0: as fast as possible)
    int params = 16;
    int step_count_per_record = 1;
    int ndigits = 6;
    bool activations = false;  // also write actv/actv_grad with micro_step (grad_acc_steps 2)
    std::uint64_t seed = 1;
    std::vector<Fault> faults;
    // msprobe's monitor config, followed as TrainerMon does (core/sim/monitor_config_follower): only the steps it
    // collects are written. Empty: every step is.
    std::string monitor_config;
    bool dynamic_monitor = false;  // DYNAMIC_MONITOR=True: the config is read again whenever it changes
};

struct SimResult {
    std::int64_t files = 0;
    std::int64_t rows = 0;
    std::int64_t bytes = 0;
    std::int64_t steps = 0;  // steps written (collected)
    std::vector<std::string> rank_dirs;
};

// Runs the simulation; returns early (with what was written) when `stop` becomes true.
bool run_msprobe_simulation(const SimOptions& options, const std::atomic<bool>& stop, SimResult& result,
                            std::string& error);

}  // namespace msmon
