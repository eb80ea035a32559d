// msmon's default checks on a series' own history: non-finite transitions and robust jumps.
#include "core/detect/series_checks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace msmon {
namespace {

const CheckSlots kSlots = CheckSlots::from_ops({"min", "max", "norm", "mean", "nans", "zeros"});

struct Row {
    double v[6];
};
Row finite_row(double norm) {
    return {{-1, 1, norm, 0, 0, 0}};
}
Row nan_row(double count) {
    return {{NAN, NAN, NAN, NAN, count, 0}};
}
Row placeholder() {
    return {{NAN, NAN, NAN, NAN, NAN, NAN}};
}

TEST(SeriesChecks, nans_count_leaving_zero_is_one_finding_and_placeholders_never_count) {
    SeriesCheckState s;
    for (int i = 0; i < 3; ++i) EXPECT_FALSE(s.check_non_finite(kSlots, placeholder().v, 6));
    EXPECT_FALSE(s.check_non_finite(kSlots, finite_row(2.5).v, 6));
    auto f = s.check_non_finite(kSlots, nan_row(1).v, 6);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->slot, kSlots.nans);
    EXPECT_EQ(f->value, 1);
    EXPECT_FALSE(s.check_non_finite(kSlots, nan_row(16).v, 6)) << "still non-finite: the same event";
    EXPECT_FALSE(s.check_non_finite(kSlots, finite_row(2.5).v, 6));
    EXPECT_TRUE(s.check_non_finite(kSlots, nan_row(3).v, 6)) << "finite again, then NaN: a new event";

    SeriesCheckState always_placeholder;  // msprobe's rows for a tensor it cannot measure, e.g. an input's grad
    for (int i = 0; i < 50; ++i) EXPECT_FALSE(always_placeholder.check_non_finite(kSlots, placeholder().v, 6));
}

TEST(SeriesChecks, a_value_becoming_nan_or_inf_after_being_finite_is_found_without_a_nans_op) {
    const CheckSlots scalar = CheckSlots::scalar();
    SeriesCheckState s;
    const double first_inf = INFINITY;
    EXPECT_FALSE(s.check_non_finite(scalar, &first_inf, 1)) << "no finite history: nothing became non-finite";
    SeriesCheckState t;
    const double v = 3.25, inf = INFINITY;
    EXPECT_FALSE(t.check_non_finite(scalar, &v, 1));
    auto f = t.check_non_finite(scalar, &inf, 1);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->previous, 3.25);
}

TEST(SeriesChecks, a_jump_is_found_once_per_excursion_and_healthy_noise_never) {
    SeriesCheckOptions o;
    std::mt19937_64 rng(7);
    std::lognormal_distribution<double> noise(0.0, 0.35);  // ~x1.4 step to step, x3-4 at the tails
    SeriesCheckState s;
    int found = 0;
    for (int step = 0; step < 2000; ++step) found += s.check_jump(o, 12.0 * noise(rng)).has_value();
    EXPECT_EQ(found, 0) << "healthy noise raised jumps";
    // x40 for three steps: one finding, at its first step.
    std::vector<int> at;
    for (int step = 0; step < 20; ++step) {
        const double v = 12.0 * noise(rng) * (step >= 5 && step < 8 ? 40 : 1);
        if (auto j = s.check_jump(o, v)) {
            at.push_back(step);
            EXPECT_GT(j->ratio, 15);
        }
    }
    EXPECT_EQ(at, std::vector<int>{5});
    // Downwards too (a gradient that vanishes).
    auto d = s.check_jump(o, 12.0 / 100);
    ASSERT_TRUE(d);
    EXPECT_LT(d->ratio, 0.1);
}

TEST(SeriesChecks, a_slow_drift_is_found_once_and_a_one_step_spike_or_noise_is_no_drift) {
    SeriesCheckOptions o;
    std::mt19937_64 rng(11);
    std::lognormal_distribution<double> noise(0.0, 0.3);
    SeriesCheckState s;
    std::vector<int> jumps, drifts;
    double level = 2.0;
    for (int step = 0; step < 250; ++step) {
        if (step >= 40) level *= 1.04;  // +4% a step: x20 above the early level after ~80 steps, never a jump
        double v = level * noise(rng);
        if (step == 20) v *= 100;  // a one-step spike early on: a jump, not a drift
        if (s.check_jump(o, v)) jumps.push_back(step);
        if (auto d = s.check_drift(o)) {
            drifts.push_back(step);
            EXPECT_GE(d->ratio, 20);
        }
    }
    EXPECT_EQ(jumps, std::vector<int>{20});
    ASSERT_EQ(drifts.size(), 1u) << "one finding while the drift lasts";
    EXPECT_GT(drifts[0], 40 + 60);
    EXPECT_LT(drifts[0], 40 + 100);

    SeriesCheckState healthy;  // a long healthy series, shrinking slowly as training converges
    int found = 0;
    for (int step = 0; step < 3000; ++step) {
        healthy.check_jump(o, 5.0 * std::pow(0.999, step) * noise(rng));
        found += healthy.check_drift(o).has_value();
    }
    EXPECT_EQ(found, 0);
}

TEST(SeriesChecks, a_jump_to_a_level_that_stays_is_one_jump_not_a_drift_too) {
    // A layer's output ×80 from step 30 on (a bias set to -50): the jump is found; the median reaching that level
    // some steps later is the same event, not a slow drift.
    SeriesCheckOptions o;
    std::mt19937_64 rng(5);
    std::lognormal_distribution<double> noise(0.0, 0.05);
    SeriesCheckState s;
    std::vector<int> jumps, drifts;
    for (int step = 0; step < 120; ++step) {
        const double v = (step >= 30 ? 1130.0 : 14.0) * noise(rng);
        if (s.check_jump(o, v)) jumps.push_back(step);
        if (s.check_drift(o)) drifts.push_back(step);
        if (step == 60) s = SeriesCheckState::decode(s.encode());  // and across a restart of msmon
    }
    EXPECT_EQ(jumps, std::vector<int>{30});
    EXPECT_TRUE(drifts.empty()) << drifts.front();
}

TEST(SeriesChecks, outputs_turning_all_zero_are_a_dead_module_found_once_until_they_come_back) {
    SeriesCheckState st;
    auto row = [](double zeros) { return std::vector<double>{-1, 1, 3, 0.1, 0, zeros}; };
    EXPECT_FALSE(st.check_dead(kSlots, row(0.0).data(), 6)) << "the first row has nothing to die from";
    EXPECT_FALSE(st.check_dead(kSlots, row(0.45).data(), 6)) << "a ReLU's half zeros is alive";
    const auto died = st.check_dead(kSlots, row(1.0).data(), 6);
    ASSERT_TRUE(died);
    EXPECT_NEAR(*died, 0.45, 1e-6);
    EXPECT_FALSE(st.check_dead(kSlots, row(1.0).data(), 6)) << "once";
    // Survives a restart of msmon.
    SeriesCheckState restored = SeriesCheckState::decode(st.encode());
    EXPECT_FALSE(restored.check_dead(kSlots, row(1.0).data(), 6));
    EXPECT_FALSE(restored.check_dead(kSlots, row(0.2).data(), 6));
    EXPECT_TRUE(restored.check_dead(kSlots, row(1.0).data(), 6)) << "back to life, then dead again";
    // Mostly zero already (a sparse tensor filling up): not a death.
    SeriesCheckState sparse;
    sparse.check_dead(kSlots, row(0.8).data(), 6);
    EXPECT_FALSE(sparse.check_dead(kSlots, row(1.0).data(), 6));
}

TEST(SeriesChecks, state_survives_encoding_so_a_restarted_msmon_judges_the_same) {
    SeriesCheckOptions o;
    std::mt19937_64 rng(3);
    std::lognormal_distribution<double> noise(0.0, 0.2);
    std::vector<double> values;
    for (int i = 0; i < 200; ++i)
        values.push_back(5.0 * noise(rng) * (i == 30 ? 50 : 1) * (i > 60 ? std::pow(1.05, i - 60) : 1));
    values[25] = NAN;
    auto run = [&](bool reencode) {
        SeriesCheckState s;
        std::vector<int> out;
        for (int i = 0; i < 200; ++i) {
            if (reencode) s = SeriesCheckState::decode(s.encode());
            Row r = std::isnan(values[i]) ? nan_row(1) : finite_row(values[i]);
            if (s.check_non_finite(kSlots, r.v, 6)) out.push_back(1000 + i);
            if (s.check_jump(o, values[i])) out.push_back(i);
            if (s.check_drift(o)) out.push_back(2000 + i);
        }
        return out;
    };
    const auto plain = run(false);
    ASSERT_EQ(plain.size(), 3u);
    EXPECT_EQ(plain[0], 1025);
    EXPECT_EQ(plain[1], 30);
    EXPECT_GT(plain[2], 2000 + 60) << "the drift";
    EXPECT_EQ(run(true), run(false));
}

}  // namespace
}  // namespace msmon
