// Unit tests for core/sim/simulated_training: the invariants between ranks that msmon's detectors check hold
// exactly on healthy steps — replicas of a shard agree, shards differ, a weight's param_updated is its next
// param_origin, the update ratio moves smoothly — and each planted fault breaks them where it acts and nowhere else.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/sim/fault_schedule.hpp"
#include "core/sim/simulated_training.hpp"

namespace msmon {
namespace {

bool same(const StatRow& a, const StatRow& b) {
    return a.min == b.min && a.max == b.max && a.norm == b.norm && a.mean == b.mean && a.nans == b.nans &&
           a.zeros == b.zeros;
}

double update_ratio(const StatRow& origin, const StatRow& updated) {
    return std::abs(updated.norm - origin.norm) / origin.norm;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// A job of `ranks` ranks in tensor-parallel groups of `tp`, stepped through `steps` steps with `faults`.
struct Job {
    SimModel model;
    FaultSchedule schedule;
    SimulatedTraining training;
    Job(int params, int ranks, int tp, std::int64_t steps, const std::vector<Fault>& faults, bool activations = false)
        : model(params, 7),
          schedule(make(model, faults, steps, ranks)),
          training(model, 0, ranks, tp, activations, 2, 7) {}
    static FaultSchedule make(const SimModel& m, const std::vector<Fault>& faults, std::int64_t steps, int ranks) {
        std::string error;
        auto s = FaultSchedule::make(m, faults, 0, steps, 0, ranks, error);
        EXPECT_TRUE(s) << error;
        return *s;
    }
    void step(std::int64_t s) { training.run_step(s, 0, schedule.at(s, true)); }
};

TEST(SimTraining, replicas_of_a_shard_agree_shards_differ_and_layernorm_weights_are_held_whole) {
    Job job(16, 8, 2, 20, {});
    const auto& params = job.model.params();
    std::vector<StatRow> updated_before;
    for (std::int64_t s = 0; s < 20; ++s) {
        job.step(s);
        for (std::size_t p = 0; p < params.size(); ++p) {
            const int pi = static_cast<int>(p);
            // Ranks 0, 2, 4, 6 hold shard 0; 1, 3, 5, 7 shard 1 (Megatron's order: tp index = rank % tp).
            EXPECT_EQ(job.training.shard_of(5), 1);
            EXPECT_EQ(job.training.shard_of(5, pi), params[p].vector ? 0 : 1);
            const bool differ = !same(job.training.param_updated(0, pi), job.training.param_updated(1, pi));
            EXPECT_EQ(differ, !params[p].vector) << params[p].name << " at step " << s;
            if (!params[p].vector) {
                EXPECT_FALSE(same(job.training.grad_reduced(0, pi), job.training.grad_reduced(1, pi)))
                    << "shards' reduced gradients differ: " << params[p].name << " at step " << s;
            }
            // Nothing changes a weight between two steps.
            for (int shard = 0; shard < 2 && s > 0; ++shard) {
                EXPECT_TRUE(same(job.training.param_origin(shard, pi),
                                 updated_before[static_cast<std::size_t>(shard) * params.size() + p]))
                    << params[p].name << " shard " << shard << " at step " << s;
            }
        }
        updated_before.clear();
        for (int shard : {0, 1})
            for (std::size_t p = 0; p < params.size(); ++p)
                updated_before.push_back(job.training.param_updated(shard, static_cast<int>(p)));
        EXPECT_TRUE(job.training.own_rows().empty());
    }
}

TEST(SimTraining, the_update_ratio_is_a_small_smooth_per_step_quantity_that_a_learning_rate_multiplies) {
    Job healthy(16, 4, 1, 60, {});
    Job blown(16, 4, 1, 60, {{Fault::Type::lr, 40, -1, 20, ""}});
    const auto& params = healthy.model.params();
    std::vector<std::vector<double>> ratios(params.size()), blown_ratios(params.size());
    for (std::int64_t s = 0; s < 60; ++s) {
        healthy.step(s);
        blown.step(s);
        for (std::size_t p = 0; p < params.size(); ++p) {
            const int pi = static_cast<int>(p);
            ratios[p].push_back(
                update_ratio(healthy.training.param_origin(0, pi), healthy.training.param_updated(0, pi)));
            blown_ratios[p].push_back(
                update_ratio(blown.training.param_origin(0, pi), blown.training.param_updated(0, pi)));
        }
    }
    for (std::size_t p = 0; p < params.size(); ++p) {
        const auto& r = ratios[p];
        for (std::size_t s = 0; s < r.size(); ++s) {
            EXPECT_GT(r[s], 2e-5) << params[p].name << " step " << s;
            EXPECT_LT(r[s], 2e-2) << params[p].name << " step " << s;
            if (s >= 8) {  // never the jump an optimizer-wide change makes (10x the recent median)
                const std::vector<double> recent(r.begin() + static_cast<std::ptrdiff_t>(s - 8),
                                                 r.begin() + static_cast<std::ptrdiff_t>(s));
                EXPECT_LT(r[s], 5 * median(recent)) << params[p].name << " step " << s;
            }
        }
        for (std::size_t s = 0; s < 40; ++s) EXPECT_EQ(blown_ratios[p][s], r[s]) << "the same run until step 40";
        // From step 40 the update is 20 times larger (the norm's steps, as printed: a few percent of noise).
        const double before = median({r.begin() + 32, r.begin() + 40});
        EXPECT_GT(blown_ratios[p][40], 10 * before) << params[p].name;
    }
}

TEST(SimTraining, a_corrupted_weight_departs_from_its_replicas_while_its_gradient_and_moments_stay_theirs) {
    Job job(16, 4, 1, 30, {{Fault::Type::sdc, 20, 2, 1.01, ""}});
    const int w = job.model.default_fault_param();
    StatRow updated_19;
    for (std::int64_t s = 0; s < 30; ++s) {
        job.step(s);
        if (s == 19) updated_19 = job.training.param_updated(0, w);
        if (s < 20) {
            EXPECT_TRUE(job.training.own_rows().empty()) << "step " << s;
            continue;
        }
        ASSERT_EQ(job.training.own_rows().size(), 1u) << "step " << s;
        const auto& own = job.training.own_rows().front();
        EXPECT_EQ(own.rank, 2);
        EXPECT_EQ(own.param, w);
        EXPECT_TRUE(same(own.grad_reduced, job.training.grad_reduced(0, w)));
        EXPECT_TRUE(same(own.exp_avg, job.training.exp_avg(0, w)));
        EXPECT_TRUE(same(own.exp_avg_sq, job.training.exp_avg_sq(0, w)));
        EXPECT_FALSE(same(own.origin, job.training.param_origin(0, w))) << "step " << s;
        EXPECT_FALSE(same(own.updated, job.training.param_updated(0, w))) << "step " << s;
        if (s == 20) {
            EXPECT_DOUBLE_EQ(own.origin.norm, 1.01 * updated_19.norm) << "x1.01 after step 19's update";
            EXPECT_TRUE(same(job.training.param_origin(0, w), updated_19)) << "the replicas' copy is intact";
        }
    }
}

TEST(SimTraining, a_corrupted_reduced_gradient_moves_that_ranks_moments_and_weights_apart) {
    Job job(16, 4, 1, 30, {{Fault::Type::sdcgrad, 20, 1, 1.5, ""}});
    const int w = job.model.default_fault_param();
    for (std::int64_t s = 0; s < 30; ++s) {
        job.step(s);
        if (s < 20) {
            EXPECT_TRUE(job.training.own_rows().empty());
            continue;
        }
        ASSERT_EQ(job.training.own_rows().size(), 1u);
        const auto& own = job.training.own_rows().front();
        EXPECT_EQ(own.rank, 1);
        if (s == 20) {
            EXPECT_NEAR(own.grad_reduced.norm, 1.5 * job.training.grad_reduced(0, w).norm,
                        1e-9 * own.grad_reduced.norm);
            EXPECT_TRUE(same(own.exp_avg, job.training.exp_avg(0, w))) << "msprobe reads them before the update";
            EXPECT_TRUE(same(own.origin, job.training.param_origin(0, w)));
            EXPECT_FALSE(same(own.updated, job.training.param_updated(0, w)));
        } else {
            EXPECT_TRUE(same(own.grad_reduced, job.training.grad_reduced(0, w))) << "step " << s;
            EXPECT_FALSE(same(own.origin, job.training.param_origin(0, w))) << "step " << s;
        }
        if (s == 21) {
            EXPECT_FALSE(same(own.exp_avg, job.training.exp_avg(0, w))) << "read after the corrupted update";
        }
    }
}

// Adam's moments on the corrupted rank converge back to its replicas' (the same gradients after the one
// corrupted): once they print the same they are the same, and never print apart again.
TEST(SimTraining, a_corrupted_ranks_moments_rejoin_its_replicas_once_and_for_all) {
    Job job(16, 4, 1, 300, {{Fault::Type::sdcgrad, 20, 1, 1.5, ""}});
    const int w = job.model.default_fault_param();
    int rejoined = -1, departures = 0;
    bool apart = false;
    for (std::int64_t s = 0; s < 300; ++s) {
        job.step(s);
        if (s < 21) continue;
        const auto& own = job.training.own_rows().front();
        const bool now_apart = !prints_same(own.exp_avg, job.training.exp_avg(0, w), 6);
        departures += now_apart && !apart;
        if (apart && !now_apart) rejoined = static_cast<int>(s);
        apart = now_apart;
        EXPECT_FALSE(same(own.origin, job.training.param_origin(0, w))) << "its weights stay apart: step " << s;
    }
    EXPECT_EQ(departures, 1);
    EXPECT_GT(rejoined, 21);
    EXPECT_FALSE(apart);
}

TEST(SimTraining, a_dead_module_outputs_zeros_on_every_rank_and_its_weights_get_no_gradient) {
    Job job(16, 4, 1, 12, {{Fault::Type::dead, 8, -1, 100, ""}}, true);
    const int dead = job.model.default_dead_module();
    const SimModule& mod = job.model.modules()[static_cast<std::size_t>(dead)];
    for (std::int64_t s = 0; s < 12; ++s) {
        job.step(s);
        for (int r = 0; r < 4; ++r)
            for (int micro = 0; micro < 2; ++micro) {
                const StatRow& out = job.training.actv(r, micro, mod.output);
                EXPECT_EQ(out.zeros == 1 && out.norm == 0 && out.min == 0 && out.max == 0 && out.mean == 0, s >= 8)
                    << "rank " << r << " step " << s;
            }
        for (int p : mod.params)
            for (int r = 0; r < 4; ++r) {
                EXPECT_EQ(job.training.grad_unreduced(r, p).norm == 0, s >= 8) << "step " << s;
                EXPECT_EQ(job.training.grad_unreduced(r, p).zeros, s >= 8 ? 1.0 : 0.0) << "step " << s;
            }
    }
    EXPECT_EQ(job.training.dead_module(), dead);
}

}  // namespace
}  // namespace msmon
