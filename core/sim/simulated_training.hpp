// The numbers behind the simulated CSVs: data-parallel training of a SimModel step by step — each rank's own
// gradient, their all-reduced mean, Adam's moments from it, the weights, and each rank's activations — with the
// faults of the step applied where they act. The model and its calibration against real msprobe runs are
// described atop simulated_training.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "core/sim/sim_model.hpp"

namespace msmon {

// One row's statistics, before rounding.
struct StatRow {
    double min = 0, max = 0, norm = 0, mean = 0, nans = 0, zeros = 0;
};

// What the faults do at one step.
struct StepFaults {
    struct Rank {
        double grad_factor = 1;   // spike: this rank's gradients ×
        double batch_factor = 1;  // baddata: this rank's batch ×
        int nan_module = -1;      // nan: the module whose output gets a NaN in micro-step 0
    };
    std::vector<Rank> ranks;                    // one per simulated rank
    std::vector<std::pair<int, double>> drift;  // module → factor on its output and its gradients
};

class SimulatedTraining {
public:
    // Ranks first_rank .. first_rank + ranks - 1; `micro_steps` micro-batches per step when activations are on.
    SimulatedTraining(const SimModel& model, int first_rank, int ranks, bool activations, int micro_steps,
                      std::uint64_t seed);

    // Computes step `step` of launch `launch` (a restarted job draws new noise for the steps it repeats).
    void run_step(std::int64_t step, int launch, const StepFaults& faults);

    // The results of the last run_step. rank is the index among the simulated ranks (0 .. ranks-1).
    const StatRow& grad_unreduced(int rank, int param) const;
    const StatRow& grad_reduced(int param) const { return reduced_[static_cast<std::size_t>(param)]; }
    bool has_optimizer_state() const { return had_state_; }  // Adam's state existed before this step
    const StatRow& exp_avg(int param) const { return exp_avg_[static_cast<std::size_t>(param)]; }
    const StatRow& exp_avg_sq(int param) const { return exp_avg_sq_[static_cast<std::size_t>(param)]; }
    const StatRow& param_origin(int param) const { return origin_[static_cast<std::size_t>(param)]; }
    const StatRow& param_updated(int param) const { return updated_[static_cast<std::size_t>(param)]; }
    const StatRow& actv(int rank, int micro, int value) const;
    const StatRow& actv_grad(int rank, int micro, int grad) const;
    // A NaN planted in a module's output shows only from that module's row on: rows of the same tensor that
    // msprobe wrote before the module's hook ran (a child's output is its container's) are still clean.
    // The module with the planted NaN on this rank and micro-step, or -1; and its output's clean statistics.
    int nan_module(int rank, int micro) const { return nan_module_[slot(rank, micro)]; }
    const StatRow& clean_output(int rank, int micro) const { return clean_output_[slot(rank, micro)]; }

    // What a restart from a checkpoint restores.
    struct State {
        std::vector<std::vector<double>> signal, m, v;
        std::vector<double> weight;
        // The weights' statistics after the last update: what the next step starts from (param_origin equals the
        // previous param_updated, as msprobe prints them for a real job).
        std::vector<StatRow> weight_stats;
        std::int64_t updates = 0;
        bool poisoned = false;
    };
    State state() const;
    void restore(const State& s);

private:
    void run_gradients(std::int64_t step, int launch, const StepFaults& faults);
    void run_activations(std::int64_t step, int launch, const StepFaults& faults);

    const SimModel& model_;
    int first_rank_, ranks_, micro_steps_;
    bool activations_;
    std::uint64_t seed_;
    std::vector<int> dims_;  // per parameter: elements simulated (the rest scale from them)
    State state_;
    // Results of the last step.
    bool had_state_ = false;
    std::vector<StatRow> unreduced_, reduced_, exp_avg_, exp_avg_sq_, origin_, updated_;
    std::size_t slot(int rank, int micro) const {
        return static_cast<std::size_t>(rank) * static_cast<std::size_t>(micro_steps_) +
               static_cast<std::size_t>(micro);
    }
    std::vector<double> rank_scale_;  // this step's per-rank loss scale (log), shared by all of a rank's gradients
    std::vector<StatRow> actv_, actv_grad_;  // [rank][micro][value or grad], flattened
    std::vector<int> nan_module_;            // [rank][micro]
    std::vector<StatRow> clean_output_;      // [rank][micro]
};

}  // namespace msmon
