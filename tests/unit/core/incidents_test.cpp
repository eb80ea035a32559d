// Incidents: one event's anomalies grouped, its origin first, the most severe incident first.
#include "core/detect/incidents.hpp"

#include <gtest/gtest.h>

namespace msmon {
namespace {

AnomalyRecord anomaly(const char* source, const char* rule, int rank, std::int64_t step, const char* kind,
                      std::int64_t order, double score, const char* name = "m") {
    AnomalyRecord a;
    a.source = source;
    a.rule = rule;
    a.rank = rank;
    a.step = step;
    a.kind = kind;
    a.call_id = order;
    a.score = score;
    a.name = name;
    return a;
}

TEST(Incidents, a_nan_spreading_over_modules_ranks_and_steps_is_one_incident_with_its_origin_first) {
    // Stored in arrival order: rank 0's files were read before rank 3's.
    std::vector<AnomalyRecord> list = {
        anomaly("detected", "NonFinite", 0, 11, "grad_reduced", 50, 100),
        anomaly("detected", "NonFinite", 0, 12, "actv", 2, 100),
        anomaly("detected", "NonFinite", 3, 11, "grad_unreduced", 40, 100),
        anomaly("detected", "NonFinite", 3, 11, "actv_grad", 30, 100),
        anomaly("detected", "NonFinite", 3, 11, "actv", 12, 100, "layers.0.fc2.output"),
        anomaly("detected", "NonFinite", 1, 12, "exp_avg", 60, 100),
        anomaly("detected", "Jump", 2, 30, "actv", 1, 70),  // a later, separate event
    };
    const auto incidents = group_incidents(list);
    ASSERT_EQ(incidents.size(), 2u);
    EXPECT_EQ(incidents[0].members.size(), 6u);
    EXPECT_EQ(list[incidents[0].origin].name, "layers.0.fc2.output");
    EXPECT_EQ(incidents[0].members.front(), incidents[0].origin);
    EXPECT_EQ(incidents[0].first_step, 11);
    EXPECT_EQ(incidents[0].last_step, 12);
    EXPECT_EQ(incidents[0].ranks, (std::vector<int>{0, 1, 3}));
    EXPECT_EQ(incidents[1].origin, 6u);
}

TEST(Incidents, a_drift_found_on_each_rank_at_its_own_step_is_one_incident_beside_a_spike_amid_it) {
    // Each rank's median crosses the threshold at its own step (the simulator's drift_8r: 141 .. 160), and a
    // spike at step 150 is an event of its own; a drift found 200 steps later is another slow growth.
    std::vector<AnomalyRecord> list = {
        anomaly("detected", "Drift", 0, 160, "grad_unreduced", 20, 62, "layers.1.fc2.weight"),
        anomaly("detected", "Drift", 6, 141, "actv", 7, 62, "layers.1.fc2.output"),
        anomaly("detected", "Drift", 2, 155, "grad_unreduced", 20, 62, "layers.1.fc2.weight"),
        anomaly("detected", "Jump", 3, 150, "grad_unreduced", 5, 80),
        anomaly("detected", "Jump", 3, 151, "exp_avg", 5, 70),
        anomaly("detected", "Drift", 1, 400, "actv", 9, 60, "layers.3.fc1.output"),
    };
    const auto incidents = group_incidents(list);
    ASSERT_EQ(incidents.size(), 3u);
    EXPECT_EQ(list[incidents[0].origin].rule, "Jump");  // the most severe first
    EXPECT_EQ(incidents[0].members.size(), 2u);
    EXPECT_EQ(list[incidents[1].origin].name, "layers.1.fc2.output");
    EXPECT_EQ(incidents[1].members.size(), 3u);
    EXPECT_EQ(incidents[1].first_step, 141);
    EXPECT_EQ(incidents[1].last_step, 160);
    EXPECT_EQ(incidents[1].ranks, (std::vector<int>{0, 2, 6}));
    EXPECT_EQ(list[incidents[2].origin].name, "layers.3.fc1.output");
}

TEST(Incidents, the_origin_is_the_earliest_severe_member_not_noise_that_comes_first) {
    std::vector<AnomalyRecord> list = {
        anomaly("msprobe", "AnomalyTurbulence", 2, 44, "actv", 0, 2),  // a mean near zero: noise
        anomaly("detected", "CrossRankOutlier", 0, 44, "grad_unreduced", 9, 66),
        anomaly("detected", "Jump", 0, 44, "actv", 1, 74, "embed.input"),
        anomaly("detected", "Jump", 0, 44, "actv", 3, 80, "layers.0.norm.input"),
    };
    const auto incidents = group_incidents(list);
    ASSERT_EQ(incidents.size(), 1u);
    EXPECT_EQ(list[incidents[0].origin].name, "embed.input");
    EXPECT_EQ(incidents[0].score, 80);
}

TEST(Incidents, msprobe_dumps_do_not_chain_steps_and_severity_orders_incidents) {
    std::vector<AnomalyRecord> list;
    for (int step = 0; step < 10; ++step)
        list.push_back(anomaly("msprobe", "AnomalyTurbulence", 0, step, "actv", 1, 2));
    list.push_back(anomaly("detected", "Jump", 1, 7, "grad_reduced", 1, 90));
    const auto incidents = group_incidents(list);
    EXPECT_EQ(incidents.size(), 10u);
    EXPECT_EQ(list[incidents[0].origin].rule, "Jump") << "the most severe incident first";
    EXPECT_EQ(incidents[0].members.size(), 2u) << "the dump of the same step joins it";
}

}  // namespace
}  // namespace msmon
