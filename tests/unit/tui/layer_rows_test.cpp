// The Layers view's row model: layer numbers read from real tensor names, rows folded by layer in
// forward order, and colour levels relative to a row's own history.
#include "tui/models/layer_rows.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace msmon::tui {
namespace {

TEST(LayerRows, layer_numbers_from_the_names_msprobe_and_mindformers_write) {
    EXPECT_EQ(layer_of("module.module.decoder.layers.12.mlp.linear_fc2.output"), 12);
    EXPECT_EQ(layer_of("module.layers.0.fc2.output"), 0);
    EXPECT_EQ(layer_of("model.layers.3.attention.wq.weight"), 3);
    EXPECT_EQ(layer_of("0:model.layer.7.ffn"), 7);
    EXPECT_EQ(layer_of("module.module.embedding.word_embeddings.weight"), std::nullopt);
    EXPECT_EQ(layer_of("module.module.output_layer.weight"), std::nullopt);  // "output_layer" is not layers.N
    EXPECT_EQ(layer_of("sublayers.4.x"), std::nullopt);                      // not a word of its own
    EXPECT_EQ(layer_of("layers.x.y"), std::nullopt);
}

TEST(LayerRows, rows_fold_into_consecutive_runs_of_one_layer) {
    const std::vector<ModuleRow> rows = {{"embed.weight", "0", {}},           {"decoder.layers.0.attn.w", "0", {}},
                                         {"decoder.layers.0.mlp.w", "0", {}}, {"decoder.layers.1.attn.w", "0", {}},
                                         {"decoder.layers.1.mlp.w", "0", {}}, {"decoder.layers.1.norm.w", "0", {}},
                                         {"output_layer.weight", "0", {}}};
    const auto groups = group_by_layer(rows);
    ASSERT_EQ(groups.size(), 4u);
    EXPECT_EQ(groups[0].layer, std::nullopt);
    EXPECT_EQ(groups[1].layer, 0);
    EXPECT_EQ(groups[1].first, 1u);
    EXPECT_EQ(groups[1].count, 2u);
    EXPECT_EQ(groups[2].layer, 1);
    EXPECT_EQ(groups[2].count, 3u);
    EXPECT_EQ(groups[3].layer, std::nullopt);
    EXPECT_EQ(groups[3].first, 6u);
}

TEST(LayerRows, a_jump_shows_as_strongly_in_a_tiny_tensor_as_in_a_large_one) {
    std::vector<StepValue> tiny, large;
    for (std::int64_t s = 0; s < 20; ++s) {
        tiny.push_back({s, 1e-6 * (1 + 0.01 * static_cast<double>(s % 3))});
        large.push_back({s, 50.0 * (1 + 0.01 * static_cast<double>(s % 3))});
    }
    tiny.push_back({20, 40e-6});
    large.push_back({20, 2000.0});
    const double a = relative_level(tiny.back().value, recent_median(tiny, 20, 10));
    const double b = relative_level(large.back().value, recent_median(large, 20, 10));
    EXPECT_NEAR(a, std::log10(40.0), 0.01);
    EXPECT_NEAR(a, b, 0.01);
    EXPECT_NEAR(relative_level(tiny[10].value, recent_median(tiny, 10, 10)), 0, 0.01);  // a quiet step: level 0
    EXPECT_TRUE(std::isnan(relative_level(std::nan(""), 1.0)));
    EXPECT_EQ(relative_level(5, std::nullopt), 0);
    EXPECT_EQ(recent_median(tiny, 0, 10), std::nullopt);  // nothing before the first step
    // NaN in the history is skipped, not taken as the reference.
    std::vector<StepValue> holes = {{0, 2}, {1, std::nan("")}, {2, 2}, {3, 8}};
    EXPECT_EQ(recent_median(holes, 3, 10), 2);
}

}  // namespace
}  // namespace msmon::tui
