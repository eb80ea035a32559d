// The numbers behind the simulated CSVs: data-parallel (× tensor-parallel) training of a SimModel step by step —
// each rank's own gradient, the all-reduced mean over its shard's replicas, Adam's moments from it, the weights,
// and each rank's activations — with the faults of the step applied where they act. The model and its calibration
// against real msprobe runs are described atop simulated_training.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "core/sim/dead_module.hpp"
#include "core/sim/sim_model.hpp"
#include "core/sim/tensor_stats.hpp"
#include "core/sim/weight_model.hpp"

namespace msmon {

// What the faults do at one step.
struct StepFaults {
    struct Rank {
        double grad_factor = 1;   // spike: this rank's gradients ×
        double batch_factor = 1;  // baddata: this rank's batch ×
        int nan_module = -1;      // nan: the module whose output gets a NaN in micro-step 0
    };
    // sdc, sdcgrad: one rank's copy of a weight (gradient: its all-reduced gradient at this step) ×factor.
    struct Corruption {
        int rank = 0;  // index among the simulated ranks
        int param = 0;
        double factor = 1;
        bool gradient = false;
    };
    std::vector<Rank> ranks;                    // one per simulated rank
    std::vector<std::pair<int, double>> drift;  // module → factor on its output and its gradients
    std::vector<Corruption> corruptions;
    double lr_factor = 1;       // lr: every rank's learning rate ×
    int dead_module = -1;       // dead: the module whose output is all zeros, on every rank
    std::int64_t dead_for = 0;  // ... for this many steps before this one
};

class SimulatedTraining {
public:
    // Ranks first_rank .. first_rank + ranks - 1, laid out data-parallel × tensor-parallel in Megatron's order:
    // global rank g holds tensor-parallel shard g % tp of each matrix, and ranks holding the same shard are its
    // data-parallel replicas. LayerNorm weights (1-D) are held whole on every rank, as Megatron does: their input
    // is the same on the ranks of a tensor-parallel group and their gradients are all-reduced over it, so every
    // rank of the job is a replica of them. `micro_steps` micro-batches per step when activations are on.
    SimulatedTraining(const SimModel& model, int first_rank, int ranks, int tp, bool activations, int micro_steps,
                      std::uint64_t seed);

    // The decimals msprobe prints values with (its ndigits): a rank's own copy of Adam's moments rejoins its
    // replicas' once it prints the same.
    void set_printed_digits(int ndigits) { printed_digits_ = ndigits; }

    // Computes step `step` of launch `launch` (a restarted job draws new noise for the steps it repeats).
    void run_step(std::int64_t step, int launch, const StepFaults& faults);

    // The results of the last run_step. rank is the index among the simulated ranks (0 .. ranks-1); shard the
    // tensor-parallel index (0 .. tp-1): replicas print their shard's values.
    int shards() const { return tp_; }
    int shard_of(int rank) const { return (first_rank_ + rank) % tp_; }
    // The shard of `param` that `rank` holds: its tensor-parallel one, 0 for a weight held whole.
    int shard_of(int rank, int param) const {
        return model_.params()[static_cast<std::size_t>(param)].vector ? 0 : shard_of(rank);
    }
    const StatRow& grad_unreduced(int rank, int param) const;
    const StatRow& grad_reduced(int shard, int param) const { return reduced_[at(shard, param)]; }
    bool has_optimizer_state() const { return had_state_; }  // Adam's state existed before this step
    const StatRow& exp_avg(int shard, int param) const { return exp_avg_[at(shard, param)]; }
    const StatRow& exp_avg_sq(int shard, int param) const { return exp_avg_sq_[at(shard, param)]; }
    const StatRow& param_origin(int shard, int param) const { return origin_[at(shard, param)]; }
    const StatRow& param_updated(int shard, int param) const { return updated_[at(shard, param)]; }
    // A rank whose copy of a weight went its own way (sdc, sdcgrad): what it prints instead of its shard's rows.
    struct OwnRows {
        int rank = 0, param = 0;
        StatRow grad_reduced, exp_avg, exp_avg_sq, origin, updated;
    };
    const std::vector<OwnRows>& own_rows() const { return own_rows_; }
    const StatRow& actv(int rank, int micro, int value) const;
    const StatRow& actv_grad(int rank, int micro, int grad) const;
    // A NaN planted in a module's output shows only from that module's row on: rows of the same tensor that
    // msprobe wrote before the module's hook ran (a child's output is its container's) are still clean.
    // The module with the planted NaN on this rank and micro-step, or -1; and its output's clean statistics.
    int nan_module(int rank, int micro) const { return nan_module_[slot(rank, micro)]; }
    const StatRow& clean_output(int rank, int micro) const { return clean_output_[slot(rank, micro)]; }
    // The same for a dead module (every rank): the module, or -1, and its output as it was before the hook.
    int dead_module() const { return dead_.module; }
    const StatRow& alive_output(int rank, int micro) const { return alive_output_[slot(rank, micro)]; }

    // One rank's own copy of a weight: silent corruption made it differ from its replicas'. sdc: the weight only
    // (the all-reduce keeps its gradient and Adam's moments the replicas'); sdcgrad: from the corrupted gradient
    // on, its moments too, so its updates differ.
    struct OwnCopy {
        int rank = 0, param = 0;
        bool own_moments = false;
        std::vector<double> m, v;
        double weight = 0;  // its norm
        StatRow stats;      // after its last update: its next param_origin
    };
    // What a restart from a checkpoint restores. Per shard and parameter: [shard * params + param].
    struct State {
        std::vector<std::vector<double>> signal, m, v;
        std::vector<double> weight;
        // The weights' statistics after the last update: what the next step starts from (param_origin equals the
        // previous param_updated, as msprobe prints them for a real job).
        std::vector<StatRow> weight_stats;
        std::vector<OwnCopy> copies;
        std::int64_t updates = 0;
        bool poisoned = false;
    };
    State state() const;
    void restore(const State& s);

private:
    void run_gradients(std::int64_t step, int launch, const StepFaults& faults);
    void run_activations(std::int64_t step, int launch, const StepFaults& faults);
    // One weight's step on the replicas of one shard, as the ranks with their own copy of it follow it.
    struct SharedStep {
        int shard = 0, param = 0;
        const std::vector<double>* sum = nullptr;  // the all-reduced gradient
        std::vector<double> m, v;                  // Adam's moments before the update (when a copy may need them)
        double u = 0;                              // the rms of Adam's step
        NormStep norm;
        double before = 0, after = 0;  // the weight's norm
        WeightDraws draws;             // the statistics' noise after the update
        bool nan = false;
    };
    void step_own_copies(const SharedStep& shared, const StepFaults& faults);
    // Plants `c` in its rank's copy of the weight (made from the replicas' `weight`, `origin` statistics and Adam
    // moments `m`, `v` as the step begins, if the rank has none yet).
    void corrupt_copy(const StepFaults::Corruption& c, double weight, const StatRow& origin,
                      const std::vector<double>& m, const std::vector<double>& v);
    // A weight held whole is kept as shard 0's: every shard index reads it there.
    std::size_t at(int shard, int param) const {
        const int s = model_.params()[static_cast<std::size_t>(param)].vector ? 0 : shard;
        return static_cast<std::size_t>(s) * model_.params().size() + static_cast<std::size_t>(param);
    }
    // Shard 0 draws with the run's seed, so that tp 1 is the run the same seed always wrote; the others their own.
    std::uint64_t shard_seed(int shard) const;

    const SimModel& model_;
    int first_rank_, ranks_, tp_, micro_steps_;
    bool activations_;
    std::uint64_t seed_;
    int printed_digits_ = 6;
    std::vector<int> dims_;                  // per parameter: elements simulated (the rest scale from them)
    std::vector<std::vector<int>> members_;  // per shard, then all: its ranks (indices among the simulated ranks)
    std::vector<double> shard_scale_;        // per shard and parameter: its gradients' scale
    State state_;
    DeadPath dead_;  // the dead module's reach (module -1: none)
    // Results of the last step.
    bool had_state_ = false;
    std::vector<StatRow> unreduced_, reduced_, exp_avg_, exp_avg_sq_, origin_, updated_;
    std::vector<OwnRows> own_rows_;
    std::size_t slot(int rank, int micro) const {
        return static_cast<std::size_t>(rank) * static_cast<std::size_t>(micro_steps_) +
               static_cast<std::size_t>(micro);
    }
    std::vector<double> rank_scale_;  // this step's per-rank loss scale (log), shared by all of a rank's gradients
    std::vector<StatRow> actv_, actv_grad_;  // [rank][micro][value or grad], flattened
    std::vector<int> nan_module_;            // [rank][micro]
    std::vector<StatRow> clean_output_;      // [rank][micro]
    std::vector<StatRow> alive_output_;      // [rank][micro]
};

}  // namespace msmon
