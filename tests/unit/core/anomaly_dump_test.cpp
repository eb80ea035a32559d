// msprobe's anomaly dump in both message forms: the current one ("..., current value V, history mean H.") and the
// one earlier versions wrote and msprobe's docs still show (it ends at the step, and tags activations by side:
// input, output, input_grad, output_grad). Either way an entry names the rule, the op and the series the CSVs hold.
#include <gtest/gtest.h>

#include <cmath>

#include "core/parse/json_documents.hpp"

namespace msmon {
namespace {

// The example entry of msprobe's docs (monitor instructions, anomaly.json), written by an earlier version.
const char* kEarlierDump = R"({
 "0:1.self_attention.core_attention_flash_0/rank0/input_grad_min_step1": {
  "rank": 0,
  "step": 1,
  "micro_step": 0,
  "pp_stage": 0,
  "vpp_stage": 0,
  "call_id": 0,
  "tag_name": "0:1.self_attention.core_attention_flash_0/rank0/input_grad",
  "message": "Rule AnomalyTurbulence reports anomaly signal in ('0:1.self_attention.core_attention_flash_0/rank0/input_grad', 'min') at step 1.",
  "group_mates": [0, 1]
 },
 "0:2.mlp/rank1/output/norm": {
  "rank": 1, "step": 4, "vpp_stage": 0, "tag_name": "0:2.mlp/rank1/output",
  "message": "Rule AnomalyNan reports anomaly signal in ('0:2.mlp/rank1/output', 'norm') at step 4."
 },
 "0:3.mlp.weight/rank0/post_grad/norm": {
  "rank": 0, "step": 5, "tag_name": "0:3.mlp.weight/rank0/post_grad",
  "message": "Rule AnomalyTurbulence reports anomaly signal in ('0:3.mlp.weight/rank0/post_grad', 'norm') at step 5, current value 4.18739, history mean 1.98533."
 }
})";

TEST(AnomalyDump, the_earlier_message_form_names_its_rule_op_and_the_csv_series) {
    std::vector<AnomalyRecord> out;
    std::string error;
    ASSERT_EQ(parse_anomaly_dump(kEarlierDump, out, error), ParseOutcome::ok) << error;
    ASSERT_EQ(out.size(), 3u);
    const AnomalyRecord& a = out[0];
    EXPECT_EQ(a.rule, "AnomalyTurbulence");
    EXPECT_EQ(a.op, "min");
    EXPECT_EQ(a.step, 1);
    EXPECT_EQ(a.kind, "actv_grad") << "input_grad is an activation gradient";
    EXPECT_EQ(a.name, "1.self_attention.core_attention_flash_0.input") << "as the actv_grad CSV names it";
    EXPECT_EQ(a.vpp_stage, "0");
    EXPECT_FALSE(a.reference.has_value()) << "the earlier form says no history mean";
    EXPECT_TRUE(std::isnan(a.value));
    EXPECT_EQ(a.group_mates, (std::vector<int>{0, 1}));
    const AnomalyRecord& b = out[1];
    EXPECT_EQ(b.rule, "AnomalyNan");
    EXPECT_EQ(b.kind, "actv");
    EXPECT_EQ(b.name, "2.mlp.output");
    EXPECT_EQ(b.rank, 1);
    const AnomalyRecord& c = out[2];
    EXPECT_EQ(c.kind, "grad_reduced");
    EXPECT_EQ(c.name, "3.mlp.weight");
    EXPECT_DOUBLE_EQ(c.value, 4.18739);
    ASSERT_TRUE(c.reference.has_value());
    EXPECT_DOUBLE_EQ(*c.reference, 1.98533);
}

TEST(AnomalyDump, the_current_form_keeps_its_tag_name_and_micro_step) {
    const std::string text = R"({"k": {"rank": 0, "step": 0, "tag_name": "0:.input:0/rank0/actv_grad",
        "message": "Rule AnomalyNan reports anomaly signal in ('0:.input:0/rank0/actv_grad', 'zeros') at step 0, current value nan, history mean nan."}})";
    std::vector<AnomalyRecord> out;
    std::string error;
    ASSERT_EQ(parse_anomaly_dump(text, out, error), ParseOutcome::ok) << error;
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].kind, "actv_grad");
    EXPECT_EQ(out[0].name, ".input");
    EXPECT_EQ(out[0].op, "zeros");
    EXPECT_TRUE(out[0].reference.has_value());
}

}  // namespace
}  // namespace msmon
