// Pipeline stages from the layers each rank's tensors name.
#include "tui/models/pipeline_stages.hpp"

#include <gtest/gtest.h>

namespace msmon::tui {
namespace {

std::vector<ModuleRow> rows(std::initializer_list<const char*> names) {
    std::vector<ModuleRow> out;
    for (const char* n : names) out.push_back({n, "0", std::nullopt});
    return out;
}

TEST(PipelineStages, ranks_holding_the_same_layers_are_one_stage_in_model_order) {
    const auto first = rows({"embed.weight", "layers.0.fc1.weight", "layers.1.fc1.weight"});
    const auto last = rows({"layers.2.fc1.weight", "layers.3.fc1.weight", "head.weight"});
    // Ranks listed with the last stage first: the stages still come in model order.
    const auto stages = pipeline_stages({{0, last}, {1, last}, {2, first}, {3, first}});
    ASSERT_EQ(stages.size(), 2u);
    EXPECT_EQ(stages[0].ranks, (std::vector<int>{2, 3}));
    EXPECT_EQ(stages[0].first_layer, 0);
    EXPECT_EQ(stages[0].last_layer, 1);
    EXPECT_TRUE(stages[0].before_layers);
    EXPECT_EQ(stages[1].ranks, (std::vector<int>{0, 1}));
    EXPECT_TRUE(stages[1].after_layers);
    EXPECT_EQ(describe_stages(stages), "2 pipeline stages: r2-3 layers 0-1, r0-1 layers 2-3");
    // One model: the embedding, layers 0..3, the head; each once.
    const auto model = model_rows({&first, &first, &last});
    ASSERT_EQ(model.size(), 6u);
    EXPECT_EQ(model.front().name, "embed.weight");
    EXPECT_EQ(model[3].name, "layers.2.fc1.weight");
    EXPECT_EQ(model.back().name, "head.weight");
}

TEST(PipelineStages, data_parallel_ranks_are_one_stage_and_nothing_is_said) {
    const auto all = rows({"embed.weight", "layers.0.fc1.weight", "head.weight"});
    const auto stages = pipeline_stages({{0, all}, {1, all}, {2, all}});
    ASSERT_EQ(stages.size(), 1u);
    EXPECT_EQ(stages[0].ranks.size(), 3u);
    EXPECT_EQ(describe_stages(stages), "");
    EXPECT_EQ(model_rows({&all, &all}).size(), 3u);
}

TEST(PipelineStages, ranks_read_to_different_depths_are_not_taken_for_stages) {
    // While a job is caught up with, one rank's tensors may be read further than another's: nested layer sets, or
    // a rank with nothing past its embedding yet. Stages hold disjoint slices; these are one stage.
    const auto some = rows({"embed.weight", "layers.0.fc1.weight"});
    const auto more = rows({"embed.weight", "layers.0.fc1.weight", "layers.1.fc1.weight", "head.weight"});
    const auto none = rows({"embed.weight"});
    for (const auto& stages : {pipeline_stages({{0, some}, {1, more}}), pipeline_stages({{0, none}, {1, more}})}) {
        ASSERT_EQ(stages.size(), 1u);
        EXPECT_EQ(stages[0].ranks, (std::vector<int>{0, 1}));
        EXPECT_EQ(describe_stages(stages), "");
    }
}

}  // namespace
}  // namespace msmon::tui
