// The --faults of one simulation placed in its model and its steps: modules resolved, restarts given the step they
// resume at, faults outside the run (or on ranks this simulation does not write) dropped. One-shot faults (spike,
// nan, baddata, stall, restart, sdc, sdcgrad) act the first time the job reaches their step — a restarted job
// repeating the step does not meet them again; a drift, a learning rate (lr) and a dead module are part of every
// step from theirs on and act in every pass.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/sim/fault_plan.hpp"
#include "core/sim/sim_model.hpp"
#include "core/sim/simulated_training.hpp"

namespace msmon {

struct ScheduledFault {
    Fault fault;
    int module = -1;                // nan, drift, dead: the module it is planted in
    int param = -1;                 // sdc, sdcgrad: the weight
    std::int64_t resume_step = -1;  // restart: the step the new run folders start at
};

class FaultSchedule {
public:
    // Steps first_step .. first_step + steps - 1, ranks first_rank .. first_rank + ranks - 1. Empty with `error`
    // set when a fault names a module the model does not have.
    static std::optional<FaultSchedule> make(const SimModel& model, const std::vector<Fault>& faults,
                                             std::int64_t first_step, std::int64_t steps, int first_rank, int ranks,
                                             std::string& error);

    const std::vector<ScheduledFault>& faults() const { return faults_; }
    std::int64_t first_step() const { return first_step_; }
    std::int64_t last_step() const { return last_step_; }

    // What acts at `step`; `first_pass`: the job has not run this step before.
    StepFaults at(std::int64_t step, bool first_pass) const;
    // After `step` (first pass): the step the restarted job resumes at, or -1.
    std::int64_t restart_after(std::int64_t step) const;
    // The steps a restart resumes at (a checkpoint is kept as each of them begins).
    std::vector<std::int64_t> resume_steps() const;
    // Global rank `rank` writes nothing after the returned step in a pass that first reaches it, or -1.
    std::int64_t stall_step(int rank) const;

private:
    std::vector<ScheduledFault> faults_;
    std::int64_t first_step_ = 0, last_step_ = 0;
    int first_rank_ = 0, ranks_ = 1;
};

}  // namespace msmon
