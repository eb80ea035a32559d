// param_updated(t) against param_origin(t+1): which rows pair, how they compare, and what is kept between batches.
#include "core/detect/param_continuity.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace msmon {
namespace {

const std::vector<std::string> kOps = {"min", "max", "norm", "mean", "nans", "zeros"};

TEST(ParamContinuity, updated_at_t_pairs_with_origin_at_t_plus_one_and_nothing_else_pairs) {
    EXPECT_TRUE(has_continuity_partner("param_origin"));
    EXPECT_TRUE(has_continuity_partner("param_updated"));
    EXPECT_FALSE(has_continuity_partner("grad_reduced"));
    EXPECT_EQ(continuity_partner("param_origin"), "param_updated");
    EXPECT_EQ(continuity_partner_step("param_origin", 31), 30);
    EXPECT_EQ(continuity_partner_step("param_updated", 30), 31);
}

TEST(ParamContinuity, equal_rows_agree_and_a_change_is_shown_on_the_norm_first) {
    const std::vector<double> updated = {-0.228276, 0.209743, 2.462905, -0.004125, 0, 0};
    EXPECT_FALSE(compare_param_rows(kOps, updated, kOps, updated));
    const std::vector<double> altered = {-0.230558, 0.211841, 2.487534, -0.004166, 0, 0};
    const auto b = compare_param_rows(kOps, updated, kOps, altered);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->op, "norm");
    EXPECT_EQ(b->updated, 2.462905);
    EXPECT_EQ(b->origin, 2.487534);
    EXPECT_EQ(b->ops_differing, 4);
    EXPECT_EQ(b->ops_compared, 6);
}

TEST(ParamContinuity, ops_are_matched_by_name_and_a_nan_placeholder_equals_itself) {
    const std::vector<std::string> reordered = {"norm", "min"};
    EXPECT_FALSE(compare_param_rows(kOps, {1, 2, 3, 4, 0, 0}, reordered, {3, 1}));
    const auto b = compare_param_rows(kOps, {1, 2, 3, 4, 0, 0}, reordered, {3, 1.5});
    ASSERT_TRUE(b);
    EXPECT_EQ(b->op, "min");
    EXPECT_EQ(b->ops_compared, 2);
    const double nan = std::nan("");
    EXPECT_FALSE(compare_param_rows({"norm"}, {nan}, {"norm"}, {nan}));
    EXPECT_TRUE(compare_param_rows({"norm"}, {1}, {"norm"}, {nan}));
    EXPECT_FALSE(compare_param_rows({"norm"}, {1}, {"min"}, {2})) << "nothing in common: nothing to say";
}

TEST(ParamContinuity, held_rows_keep_the_newest_a_reread_replaces_and_they_survive_encoding) {
    std::vector<HeldParamRow> held;
    for (std::int64_t s = 0; s < 70; ++s) hold_param_row(held, {s, 3, {1.0 * s, 2.5}});
    ASSERT_EQ(held.size(), kMaxHeldParamRows);
    EXPECT_EQ(held.front().step, 70 - static_cast<std::int64_t>(kMaxHeldParamRows));
    hold_param_row(held, {69, 4, {7, std::nan("")}});
    EXPECT_EQ(held.back().layout_id, 4);
    EXPECT_EQ(held.size(), kMaxHeldParamRows);
    const auto back = decode_held_params(encode_held_params(held));
    ASSERT_EQ(back.size(), held.size());
    EXPECT_EQ(back.back().step, 69);
    EXPECT_EQ(back.back().values[0], 7);
    EXPECT_TRUE(std::isnan(back.back().values[1]));
    EXPECT_EQ(back.front().values, held.front().values);
    EXPECT_TRUE(decode_held_params("garbage/1@x:2/").empty());
    std::vector<HeldParamRow> alone;
    for (std::int64_t s = 0; s < 10; ++s) hold_param_row(alone, {s, 1, {1}}, kMaxHeldParamRowsAlone);
    EXPECT_EQ(alone.size(), kMaxHeldParamRowsAlone);
}

}  // namespace
}  // namespace msmon
