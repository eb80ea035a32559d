// Unit tests for core/layout/monitor_layout: which names in msprobe's output tree are runs, CSVs, or noise.
#include "core/layout/monitor_layout.hpp"

#include <gtest/gtest.h>

#include <string>

namespace msmon {
namespace {

TEST(MonitorLayout, run_dir_name_splits_into_time_rank_and_uid) {
    auto r = parse_run_dir_name("Nov22_13-55-47-rank0-426b92d1");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->time_label, "Nov22_13-55-47");
    EXPECT_EQ(r->rank, 0);
    EXPECT_EQ(r->uid, "426b92d1");
}

TEST(MonitorLayout, run_dir_name_accepts_every_month_and_ranks_up_to_five_digits) {
    for (const char* month : {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}) {
        EXPECT_TRUE(parse_run_dir_name(std::string(month) + "03_21-34-40-rank1-1a2b3c4d").has_value()) << month;
    }
    auto r = parse_run_dir_name("Dec03_21-34-40-rank12345-abcdef09");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->rank, 12345);
    EXPECT_EQ(r->uid, "abcdef09");
    auto r7 = parse_run_dir_name("Feb20_16-27-56-rank7-b2f0e6a1");
    ASSERT_TRUE(r7.has_value());
    EXPECT_EQ(r7->rank, 7);
    EXPECT_EQ(r7->time_label, "Feb20_16-27-56");
}

TEST(MonitorLayout, run_dir_name_rejects_names_outside_the_strict_pattern) {
    for (const char* bad : {
             "Foo22_13-55-47-rank0-426b92d1",       // bad month
             "nov22_13-55-47-rank0-426b92d1",       // month case
             "Nov22_13-55-47-rank0-426B92D1",       // uppercase hex
             "Nov22_13-55-47-rank0-426b92d",        // 7 hex
             "Nov22_13-55-47-rank0-426b92d1a",      // 9 hex
             "Nov22_13-55-47-rank0-426b92g1",       // not hex
             "Nov22_13-55-47-rank-426b92d1",        // missing rank
             "Nov22_13-55-47-426b92d1",             // no rank part
             "Nov22_13-55-47-rank123456-426b92d1",  // 6-digit rank
             "Nov22_13-55-47-rankx-426b92d1",       // rank not digits
             "Nov2_13-55-47-rank0-426b92d1",        // one-digit day
             "Nov22-13-55-47-rank0-426b92d1",       // '-' for '_'
             "Nov22_13:55:47-rank0-426b92d1",       // ':' separators
             "Nov22_13-55-47_rank0-426b92d1",       // '_' before rank
             "Nov22_13-55-47-rank0_426b92d1",       // '_' before uid
             "Nov22_13-55-47-csv2tensorboard_by_step",
             "anomaly_detected",
             "",
         }) {
        EXPECT_FALSE(parse_run_dir_name(bad).has_value()) << "accepted '" << bad << "'";
    }
}

TEST(MonitorLayout, v2_rank_dir_name_gives_the_rank) {
    EXPECT_EQ(parse_v2_rank_dir_name("rank_0"), 0);
    EXPECT_EQ(parse_v2_rank_dir_name("rank_15"), 15);
    EXPECT_EQ(parse_v2_rank_dir_name("rank_123456"), 123456);
}

TEST(MonitorLayout, v2_rank_dir_name_rejects_other_names) {
    for (const char* bad :
         {"rank_", "rank0", "rank_a", "rank_-1", "rank_+1", "rank_1x", "Rank_1", "rank_1234567", "xrank_1", ""}) {
        EXPECT_FALSE(parse_v2_rank_dir_name(bad).has_value()) << "accepted '" << bad << "'";
    }
}

TEST(MonitorLayout, v1_csv_name_recognises_every_prefix) {
    for (const char* prefix : {"actv", "actv_grad", "grad_unreduced", "grad_reduced", "exp_avg", "exp_avg_sq",
                               "param_origin", "param_updated", "other", "attention_hook", "linear_hook",
                               "moe_router_weight_hook", "moe_router_logit_hook"}) {
        auto n = parse_v1_csv_name(std::string(prefix) + "_5-9.csv");
        ASSERT_TRUE(n.has_value()) << prefix;
        EXPECT_EQ(n->role, CsvRole::data);
        EXPECT_EQ(n->kind, prefix);
        EXPECT_EQ(n->first_step, 5);
        EXPECT_EQ(n->last_step, 9);
        EXPECT_TRUE(is_known_v1_prefix(prefix));
    }
}

TEST(MonitorLayout, v1_csv_name_tells_prefixes_that_share_a_stem_apart) {
    auto actv = parse_v1_csv_name("actv_0-0.csv");
    auto actv_grad = parse_v1_csv_name("actv_grad_0-0.csv");
    auto exp_avg = parse_v1_csv_name("exp_avg_1-1.csv");
    auto exp_avg_sq = parse_v1_csv_name("exp_avg_sq_1-1.csv");
    ASSERT_TRUE(actv && actv_grad && exp_avg && exp_avg_sq);
    EXPECT_EQ(actv->kind, "actv");
    EXPECT_EQ(actv_grad->kind, "actv_grad");
    EXPECT_EQ(exp_avg->kind, "exp_avg");
    EXPECT_EQ(exp_avg_sq->kind, "exp_avg_sq");
    auto unreduced = parse_v1_csv_name("grad_unreduced_0-4.csv");
    ASSERT_TRUE(unreduced);
    EXPECT_EQ(unreduced->kind, "grad_unreduced");
}

TEST(MonitorLayout, v1_csv_name_keeps_large_step_ranges) {
    auto n = parse_v1_csv_name("grad_reduced_1000-1004.csv");
    ASSERT_TRUE(n.has_value());
    EXPECT_EQ(n->first_step, 1000);
    EXPECT_EQ(n->last_step, 1004);
}

TEST(MonitorLayout, v1_csv_name_strips_the_part_suffix) {
    auto n = parse_v1_csv_name("grad_reduced_0-4_part_3.csv");
    ASSERT_TRUE(n.has_value());
    EXPECT_EQ(n->kind, "grad_reduced");
    EXPECT_EQ(n->first_step, 0);
    EXPECT_EQ(n->last_step, 4);
    auto sq = parse_v1_csv_name("exp_avg_sq_10-19_part_12.csv");
    ASSERT_TRUE(sq.has_value());
    EXPECT_EQ(sq->kind, "exp_avg_sq");
    EXPECT_EQ(sq->first_step, 10);
}

TEST(MonitorLayout, v1_csv_name_recognises_stack_info) {
    auto n = parse_v1_csv_name("stack_info.csv");
    ASSERT_TRUE(n.has_value());
    EXPECT_EQ(n->role, CsvRole::stack_info);
}

TEST(MonitorLayout, v1_csv_name_rejects_unknown_prefixes_and_bad_ranges) {
    for (const char* bad :
         {"grad_reduced_5.csv", "foo_0-4.csv", "grad_0-4.csv", "mbs_0-4.csv", "cc_0-4.csv", "actv_grads_0-4.csv",
          "grad_reduced_0-4.txt", "grad_reduced_0-4", "grad_reduced_a-4.csv", "grad_reduced_0-b.csv",
          "grad_reduced_-1-4.csv", "grad_reduced_0-4_part_.csv", "grad_reduced_0-4_part_x.csv", "grad_reduced_.csv",
          "0-4.csv", ".csv", "stack_info_0-0.csv", "mon_step4-5.csv", ""}) {
        EXPECT_FALSE(parse_v1_csv_name(bad).has_value()) << "accepted '" << bad << "'";
    }
}

TEST(MonitorLayout, v1_csv_name_rejects_signed_step_numbers) {
    // The range is (\d+)-(\d+): msprobe never writes a sign.
    for (const char* bad : {"grad_reduced_+0-4.csv", "grad_reduced_0-+4.csv", "grad_reduced_0--4.csv"}) {
        EXPECT_FALSE(parse_v1_csv_name(bad).has_value()) << "accepted '" << bad << "'";
    }
}

TEST(MonitorLayout, unknown_prefix_is_not_known) {
    EXPECT_FALSE(is_known_v1_prefix("grad"));
    EXPECT_FALSE(is_known_v1_prefix("stack_info"));
    EXPECT_FALSE(is_known_v1_prefix(""));
}

TEST(MonitorLayout, v2_csv_name_with_step_range) {
    auto n = parse_v2_csv_name("mon_step4-5.csv");
    ASSERT_TRUE(n.has_value());
    EXPECT_EQ(n->role, CsvRole::data);
    EXPECT_EQ(n->kind, "mon");
    EXPECT_EQ(n->first_step, 4);
    EXPECT_EQ(n->last_step, 5);
    auto wg = parse_v2_csv_name("weight_grad_step0-99.csv");
    ASSERT_TRUE(wg.has_value());
    EXPECT_EQ(wg->kind, "weight_grad");
    EXPECT_EQ(wg->last_step, 99);
}

TEST(MonitorLayout, v2_csv_name_with_negative_start) {
    auto n = parse_v2_csv_name("mon_step-1-0.csv");
    ASSERT_TRUE(n.has_value());
    EXPECT_EQ(n->kind, "mon");
    EXPECT_EQ(n->first_step, -1);
    EXPECT_EQ(n->last_step, 0);
}

TEST(MonitorLayout, v2_csv_name_without_steps_is_the_slug) {
    auto n = parse_v2_csv_name("weight_grad.csv");
    ASSERT_TRUE(n.has_value());
    EXPECT_EQ(n->kind, "weight_grad");
    EXPECT_EQ(n->role, CsvRole::data);
    auto cc = parse_v2_csv_name("cc.csv");
    ASSERT_TRUE(cc.has_value());
    EXPECT_EQ(cc->kind, "cc");
}

TEST(MonitorLayout, v2_csv_name_rejects_non_slugs) {
    for (const char* bad : {".csv", "a b.csv", "module.txt", "module", "modülé.csv", "x/y.csv", "_step1-2.csv", ""}) {
        EXPECT_FALSE(parse_v2_csv_name(bad).has_value()) << "accepted '" << bad << "'";
    }
}

TEST(MonitorLayout, ignores_non_run_children_of_the_monitor_root) {
    EXPECT_TRUE(is_ignored_monitor_child("anomaly_detected"));
    EXPECT_TRUE(is_ignored_monitor_child("module_struct"));
    EXPECT_FALSE(is_ignored_monitor_child("Nov22_13-55-47-rank0-426b92d1"));
    EXPECT_FALSE(is_ignored_monitor_child("rank_0"));
    EXPECT_FALSE(is_ignored_monitor_child("anomaly_detected2"));
    EXPECT_FALSE(is_ignored_monitor_child(""));
}

TEST(MonitorLayout, ignores_csv2tensorboard_output_folders) {
    EXPECT_TRUE(is_ignored_monitor_child("Dec04_09-00-00-csv2tensorboard_by_step"));
    EXPECT_TRUE(is_ignored_monitor_child("x-csv2tensorboard_by_step"));
    EXPECT_FALSE(is_ignored_monitor_child("Dec04_09-00-00-csv2tensorboard_by_stepx"));
}

}  // namespace
}  // namespace msmon
