// The Layers view's grid: micro-steps folded into their step by the op's rule, layers folded into one
// row showing their most extreme tensor, the `/` filter's labels, and the incidents' cells.
#include "tui/models/layer_grid.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace msmon::tui {
namespace {

std::vector<ModuleRow> xy_rows() {
    // As msprobe's xy collection writes them: each module once per micro-step.
    return {{"module.embed.output", "0", 0},
            {"module.layers.0.fc1.output", "0", 0},
            {"module.layers.0.fc2.output", "0", 0},
            {"module.layers.1.fc1.output", "0", 0},
            {"module.embed.output", "0", 1},
            {"module.layers.0.fc1.output", "0", 1},
            {"module.layers.0.fc2.output", "0", 1},
            {"module.layers.1.fc1.output", "0", 1},
            {"module.layers.1.input_layernorm.output", "0", 0}};
}

std::vector<std::string> labels(const std::vector<GridRow>& rows) {
    std::vector<std::string> out;
    for (const auto& r : rows) out.push_back(r.label);
    return out;
}

TEST(LayerGrid, micro_steps_fold_into_one_row_per_tensor_in_first_seen_order_or_stay_apart) {
    const auto rows = xy_rows();
    const auto folded = grid_rows(rows, {});
    EXPECT_EQ(labels(folded), (std::vector<std::string>{"module.embed.output", "module.layers.0.fc1.output",
                                                        "module.layers.0.fc2.output", "module.layers.1.fc1.output",
                                                        "module.layers.1.input_layernorm.output"}));
    ASSERT_EQ(folded[1].tensors.size(), 1u);
    EXPECT_EQ(folded[1].tensors[0], (std::vector<std::size_t>{1, 5}));  // both micro-steps' rows
    GridRowOptions apart;
    apart.micro_steps_apart = true;
    const auto each = grid_rows(rows, apart);
    ASSERT_EQ(each.size(), rows.size());
    EXPECT_EQ(each[0].label, "module.embed.output:0");
    EXPECT_EQ(each[4].label, "module.embed.output:1");
}

TEST(LayerGrid, a_folded_layer_is_one_row_of_its_tensors_and_the_others_stay) {
    GridRowOptions options;
    options.folded_layers = {0};
    const auto rows = grid_rows(xy_rows(), options);
    EXPECT_EQ(labels(rows),
              (std::vector<std::string>{"module.embed.output", "+ layers.0: 2 tensors", "module.layers.1.fc1.output",
                                        "module.layers.1.input_layernorm.output"}));
    EXPECT_TRUE(rows[1].folded_layer);
    EXPECT_EQ(rows[1].layer, 0);
    EXPECT_EQ(rows[1].tensors.size(), 2u);
}

TEST(LayerGrid, the_filter_takes_layers_types_sides_and_patterns_together) {
    std::string error;
    const auto only = [&](const std::string& text) {
        auto f = ModuleFilter::parse(text, error);
        EXPECT_TRUE(f) << text << ": " << error;
        GridRowOptions options;
        options.filter = &*f;
        return labels(grid_rows(xy_rows(), options));
    };
    EXPECT_EQ(only("layer=1"),
              (std::vector<std::string>{"module.layers.1.fc1.output", "module.layers.1.input_layernorm.output"}));
    EXPECT_EQ(only("layer=0-1 type=fc1"),
              (std::vector<std::string>{"module.layers.0.fc1.output", "module.layers.1.fc1.output"}));
    EXPECT_EQ(only("type=norm"), (std::vector<std::string>{"module.layers.1.input_layernorm.output"}));
    EXPECT_EQ(only("io=output fc2$"), (std::vector<std::string>{}));
    EXPECT_EQ(only("io=output fc2"), (std::vector<std::string>{"module.layers.0.fc2.output"}));
    EXPECT_EQ(only("embed"), (std::vector<std::string>{"module.embed.output"}));
    EXPECT_EQ(only(""), labels(grid_rows(xy_rows(), {})));
    // io= is a whole part of the name: "input" is not "input_layernorm".
    EXPECT_EQ(only("io=input"), (std::vector<std::string>{}));
    for (const char* bad : {"layer=x", "layer=5-2", "io=both", "type=", "fc1("}) {
        EXPECT_FALSE(ModuleFilter::parse(bad, error)) << bad;
        EXPECT_FALSE(error.empty()) << bad;
    }
    ModuleFilter::parse("layer=x", error);
    EXPECT_NE(error.find("layer="), std::string::npos) << error;
}

TEST(LayerGrid, micro_steps_combine_by_the_op_rule) {
    const std::vector<StepValue> a = {{1, 3}, {2, 1}}, b = {{1, 4}, {3, 7}};
    const auto norm = fold_micro_steps({&a, &b}, "norm");
    ASSERT_EQ(norm.size(), 3u);
    EXPECT_DOUBLE_EQ(norm[0].value, 5);  // sqrt(3^2 + 4^2): the norm of both micro-batches together
    EXPECT_DOUBLE_EQ(norm[1].value, 1);
    EXPECT_DOUBLE_EQ(norm[2].value, 7);
    EXPECT_DOUBLE_EQ(fold_micro_steps({&a, &b}, "max")[0].value, 4);
    EXPECT_DOUBLE_EQ(fold_micro_steps({&a, &b}, "min")[0].value, 3);
    EXPECT_DOUBLE_EQ(fold_micro_steps({&a, &b}, "nans")[0].value, 7);
    EXPECT_DOUBLE_EQ(fold_micro_steps({&a, &b}, "mean")[0].value, 3.5);
    const std::vector<StepValue> n = {{1, NAN}};
    EXPECT_TRUE(std::isnan(fold_micro_steps({&a, &n}, "norm")[0].value));  // a NaN micro-batch shows
}

TEST(LayerGrid, step_cells_are_one_per_step_against_the_tensors_own_recent_median) {
    std::vector<StepValue> s;
    for (int step = 0; step < 10; ++step) s.push_back({step, 2.0});
    s.push_back({10, 200.0});
    s.push_back({12, INFINITY});
    const auto levels = step_cells(s, 9, 13, true, 8);
    ASSERT_EQ(levels.size(), 5u);
    EXPECT_NEAR(levels[0].max, 0, 1e-12);  // 2 against 2
    EXPECT_NEAR(levels[1].max, 2, 1e-12);  // 200 against 2: 100x
    EXPECT_EQ(levels[2].count, 0);         // step 11: nothing written
    EXPECT_TRUE(levels[3].has_pos_inf);    // its own mark, not a level
    EXPECT_EQ(levels[4].count, 0);
    const auto values = step_cells(s, 9, 13, false, 8);
    EXPECT_DOUBLE_EQ(values[1].max, 200);
}

TEST(LayerGrid, a_folded_row_shows_its_most_extreme_tensor_and_says_which) {
    ColumnStat calm, jump, nan, empty;
    calm.count = jump.count = 1;
    calm.min = calm.max = -0.2;
    jump.min = jump.max = 1.4;
    nan.has_nan = true;
    std::vector<int> winner;
    const auto folded = fold_cells({{calm, calm, calm, empty}, {jump, calm, nan, empty}}, true, &winner);
    EXPECT_EQ(winner, (std::vector<int>{1, 0, 1, -1}));
    EXPECT_DOUBLE_EQ(folded[0].max, 1.4);
    EXPECT_TRUE(folded[2].has_nan);
    EXPECT_EQ(folded[3].count, 0);
    // By value: the largest, not the largest magnitude of a level.
    ColumnStat small, big;
    small.count = big.count = 1;
    small.min = small.max = 1;
    big.min = big.max = 9;
    fold_cells({{small}, {big}}, false, &winner);
    EXPECT_EQ(winner, (std::vector<int>{1}));
}

TEST(LayerGrid, incident_cells_are_the_members_of_the_view_s_kind_and_the_top_incident_s_origin) {
    IncidentSet set;
    const auto anomaly = [](int rank, std::int64_t step, std::string kind, std::string name, double score) {
        AnomalyRecord a;
        a.rank = rank, a.step = step, a.kind = std::move(kind), a.name = std::move(name), a.score = score;
        return a;
    };
    set.anomalies = {anomaly(3, 11, "actv", "l0.fc2.output", 100), anomaly(3, 11, "grad_reduced", "l0.fc2.weight", 90),
                     anomaly(0, 12, "actv", "l0.fc2.output", 80), anomaly(1, 30, "actv", "x", 5)};
    set.incidents = {{0, {0, 1, 2}, 11, 12, {0, 3}, 100}, {3, {3}, 30, 30, {1}, 5}};
    const auto cells = incident_cells(set, "actv");
    EXPECT_TRUE(cells.is_origin(3, 11, "l0.fc2.output"));
    EXPECT_TRUE(cells.has(0, 12, "l0.fc2.output"));
    EXPECT_FALSE(cells.has(3, 11, "l0.fc2.weight"));  // another kind
    EXPECT_FALSE(cells.has(1, 30, "x"));              // below the mark score: msprobe's per-step noise
    const auto grads = incident_cells(set, "grad_reduced");
    EXPECT_TRUE(grads.has(3, 11, "l0.fc2.weight"));
    EXPECT_FALSE(grads.origin);  // the origin is an activation
}

}  // namespace
}  // namespace msmon::tui
