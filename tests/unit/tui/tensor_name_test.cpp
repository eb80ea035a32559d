// Tensor names cut to a column keep the layer number and the module: "layers.0" and "layers.1" stay apart.
#include "tui/widgets/tensor_name.hpp"

#include <gtest/gtest.h>

namespace msmon::tui {
namespace {

TEST(TensorName, a_name_that_fits_is_left_alone) {
    EXPECT_EQ(fit_tensor_name("module.layers.0.fc2.output", 26, true), "module.layers.0.fc2.output");
    EXPECT_EQ(fit_tensor_name("embed.input", 40, false), "embed.input");
}

TEST(TensorName, wrappers_in_front_go_first_then_parts_between_numbers_then_the_front_of_the_module) {
    EXPECT_EQ(fit_tensor_name("module.layers.0.fc2.output", 20, true), "\u2026layers.0.fc2.output");
    EXPECT_EQ(fit_tensor_name("module.layers.0.fc2.output", 20, false), "~layers.0.fc2.output");
    const std::string megatron = "module.module.decoder.layers.0.mlp.linear_fc1.weight";
    EXPECT_EQ(fit_tensor_name(megatron, 40, false),
              "~decoder.layers.0.mlp.linear_fc1.weight");  // no more than needed
    EXPECT_EQ(fit_tensor_name(megatron, 31, false), "~layers.0.mlp.linear_fc1.weight");
    EXPECT_EQ(fit_tensor_name(megatron, 30, false), "~layers.0.~linear_fc1.weight");
    EXPECT_EQ(fit_tensor_name(megatron, 21, false), "~layers.0.~fc1.weight");
    EXPECT_EQ(fit_tensor_name("embedding.word_embeddings.weight", 20, false), "~d_embeddings.weight");
}

int columns(const std::string& s) {
    int cols = 0;
    for (unsigned char ch : s) cols += (ch & 0xC0) != 0x80;
    return cols;
}

TEST(TensorName, the_layer_stays_distinguishable_down_to_20_columns_and_the_expert_from_34) {
    const std::string moe = "module.module.decoder.layers.%L.mlp.experts.%E.linear_fc1.weight";
    auto name = [&](int layer, int expert) {
        std::string s = moe;
        s.replace(s.find("%L"), 2, std::to_string(layer));
        s.replace(s.find("%E"), 2, std::to_string(expert));
        return s;
    };
    for (int width : {20, 24, 30, 34, 40}) {
        const std::string a = fit_tensor_name(name(0, 3), width, true);
        EXPECT_NE(a, fit_tensor_name(name(1, 3), width, true)) << width;
        if (width >= 34) {
            EXPECT_NE(a, fit_tensor_name(name(0, 4), width, true)) << width;
        }
        EXPECT_LE(columns(a), width) << a;
        EXPECT_NE(a.find("layers.0"), std::string::npos) << a;
        EXPECT_NE(a.find("fc1.weight"), std::string::npos) << a;
    }
    EXPECT_EQ(fit_tensor_name(name(12, 3), 34, false), "~layers.12.~experts.3.~_fc1.weight");
    EXPECT_EQ(fit_tensor_name(name(0, 3), 20, true), "\u2026layers.0\u2026fc1.weight");
    // A number is never cut: layer 12 is not shown as layer 1.
    EXPECT_EQ(fit_tensor_name(name(12, 3), 20, false), "~layers.12~c1.weight");
}

TEST(TensorName, too_narrow_for_the_parts_cuts_the_middle) {
    EXPECT_EQ(fit_tensor_name("abcdefghijklmnopqrstuvwxyz", 9, false), "abcd~wxyz");
    EXPECT_EQ(fit_tensor_name("layers.10.weight", 8, false).size(), 8u);
    EXPECT_EQ(fit_tensor_name("x.y", 0, false), "");
}

}  // namespace
}  // namespace msmon::tui
