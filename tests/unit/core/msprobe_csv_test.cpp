// Unit tests for core/parse/msprobe_csv: header → schema for v1 and monitor_v2, record → typed row.
#include "core/parse/msprobe_csv.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/text/csv_record.hpp"

namespace msmon {
namespace {

// Keeps the split fields (and the scratch they may point into) alive for the test.
struct Fields {
    std::vector<std::string_view> views;
    std::string scratch;
    std::string record;

    explicit Fields(std::string text) : record(std::move(text)) {
        EXPECT_TRUE(split_csv_fields(record, views, scratch)) << record;
    }
};

CsvSchema schema_of(const std::string& header) {
    Fields f(header);
    std::string error;
    auto schema = parse_csv_header(f.views, error);
    EXPECT_TRUE(schema.has_value()) << header << ": " << error;
    return schema.value_or(CsvSchema{});
}

std::string header_error(const std::string& header) {
    Fields f(header);
    std::string error;
    auto schema = parse_csv_header(f.views, error);
    EXPECT_FALSE(schema.has_value()) << "accepted header: " << header;
    return error;
}

constexpr const char* kGradReducedHeader = "vpp_stage,name,step,norm,min,max,nans,shape,dtype";
constexpr const char* kActvHeader = "vpp_stage,name,step,micro_step,min,max,norm,nans,shape,dtype";
constexpr const char* kV2Header = "vpp_stage,step,module_name,scope,micro_step,min,max,mean,norm,nans";

// A column named twice has no meaning to pick (the last one used to win silently): the header is refused, so its
// rows are counted as malformed.
TEST(MsprobeCsv, a_header_naming_a_column_twice_is_refused) {
    EXPECT_EQ(header_error("vpp_stage,name,name,step,norm"), "column 'name' appears twice in the header");
    EXPECT_EQ(header_error("vpp_stage,name,step,norm,min,norm"), "column 'norm' appears twice in the header");
    EXPECT_EQ(header_error("vpp_stage,step,step,name,norm"), "column 'step' appears twice in the header");
    EXPECT_EQ(header_error("vpp_stage,name,module_name,step,norm"),
              "header has two name columns ('name' and 'module_name')");
}

TEST(MsprobeCsv, v1_header_without_micro_step_maps_columns_by_name) {
    const CsvSchema s = schema_of(kGradReducedHeader);
    EXPECT_EQ(s.vpp_col, 0);
    EXPECT_EQ(s.name_col, 1);
    EXPECT_EQ(s.step_col, 2);
    EXPECT_EQ(s.micro_col, -1);
    EXPECT_EQ(s.scope_col, -1);
    EXPECT_EQ(s.field_count, 9u);
    EXPECT_EQ(s.op_cols, (std::vector<int>{3, 4, 5, 6, 7, 8}));
    EXPECT_EQ(s.op_names, (std::vector<std::string>{"norm", "min", "max", "nans", "shape", "dtype"}));
    EXPECT_EQ(s.op_types, (std::vector<OpType>{OpType::numeric, OpType::numeric, OpType::numeric, OpType::numeric,
                                               OpType::shape, OpType::dtype}));
    EXPECT_EQ(s.numeric_ops, 4);
    EXPECT_EQ(s.layout, "norm,min,max,nans,shape,dtype");
}

TEST(MsprobeCsv, v1_header_with_micro_step_has_a_micro_column) {
    const CsvSchema s = schema_of(kActvHeader);
    EXPECT_EQ(s.micro_col, 3);
    EXPECT_EQ(s.step_col, 2);
    EXPECT_EQ(s.op_cols, (std::vector<int>{4, 5, 6, 7, 8, 9}));
    EXPECT_EQ(s.layout, "min,max,norm,nans,shape,dtype");
    EXPECT_EQ(s.numeric_ops, 4);
}

TEST(MsprobeCsv, layout_follows_the_header_op_order_and_set) {
    EXPECT_EQ(schema_of("vpp_stage,name,step,norm,nans,shape,dtype").layout, "norm,nans,shape,dtype");
    EXPECT_EQ(schema_of("vpp_stage,name,step,max,min,shape,dtype").layout, "max,min,shape,dtype");
    EXPECT_EQ(schema_of("vpp_stage,name,step,norm,min,max,zeros,nans,id,mean,shape,dtype").numeric_ops, 7);
}

TEST(MsprobeCsv, l2_feature_headers_have_only_numeric_ops) {
    const CsvSchema attention = schema_of("vpp_stage,name,step,micro_step,entropy,softmax_max");
    EXPECT_EQ(attention.layout, "entropy,softmax_max");
    EXPECT_EQ(attention.numeric_ops, 2);
    EXPECT_EQ(attention.micro_col, 3);
    const CsvSchema router = schema_of("vpp_stage,name,step,router_weight_similarity");
    EXPECT_EQ(router.layout, "router_weight_similarity");
    EXPECT_EQ(router.micro_col, -1);
}

TEST(MsprobeCsv, shape_and_dtype_are_text_ops_wherever_they_sit) {
    const CsvSchema s = schema_of("vpp_stage,name,step,shape,norm,dtype");
    EXPECT_EQ(s.op_types, (std::vector<OpType>{OpType::shape, OpType::numeric, OpType::dtype}));
    EXPECT_EQ(s.numeric_ops, 1);
}

TEST(MsprobeCsv, monitor_v2_header_maps_module_name_scope_and_micro_step) {
    const CsvSchema s = schema_of(kV2Header);
    EXPECT_EQ(s.vpp_col, 0);
    EXPECT_EQ(s.step_col, 1);
    EXPECT_EQ(s.name_col, 2);
    EXPECT_EQ(s.scope_col, 3);
    EXPECT_EQ(s.micro_col, 4);
    EXPECT_EQ(s.field_count, 10u);
    EXPECT_EQ(s.layout, "min,max,mean,norm,nans");
    EXPECT_EQ(s.numeric_ops, 5);
    EXPECT_EQ(s.op_cols, (std::vector<int>{5, 6, 7, 8, 9}));
}

TEST(MsprobeCsv, header_without_name_or_step_is_rejected) {
    EXPECT_FALSE(header_error("vpp_stage,step,norm,min").empty());
    EXPECT_FALSE(header_error("vpp_stage,name,norm,min").empty());
    EXPECT_FALSE(header_error("module_name,stack_info").empty());
    EXPECT_FALSE(header_error("norm").empty());
}

TEST(MsprobeCsv, header_without_ops_is_rejected) {
    EXPECT_FALSE(header_error("vpp_stage,name,step").empty());
}

TEST(MsprobeCsv, header_with_an_empty_column_name_is_rejected) {
    EXPECT_FALSE(header_error("vpp_stage,name,step,norm,").empty());
}

TEST(MsprobeCsv, header_with_more_numeric_ops_than_slots_is_rejected) {
    EXPECT_FALSE(header_error("vpp_stage,name,step,a,b,c,d,e,f,g,h,i").empty());
    // Exactly kMaxNumericOps numeric ops plus the text ops still fit.
    EXPECT_EQ(schema_of("vpp_stage,name,step,a,b,c,d,e,f,g,h,shape,dtype").numeric_ops, kMaxNumericOps);
}

struct ParsedRow {
    bool ok = false;
    std::string error;
    CsvRow row;
    std::string name, shape, dtype, vpp, scope;  // copies: the row's views die with the record
};

ParsedRow parse_row(const CsvSchema& schema, const std::string& record) {
    Fields f(record);
    ParsedRow out;
    out.ok = parse_csv_row(schema, f.views, out.row, out.error);
    out.name = std::string(out.row.name);
    out.shape = std::string(out.row.shape);
    out.dtype = std::string(out.row.dtype);
    out.vpp = std::string(out.row.vpp_stage);
    out.scope = std::string(out.row.scope);
    return out;
}

struct ExpectedRow {
    const char* record;
    const char* name;
    std::int64_t step;
    double values[4];  // NaN means "expect nan"
    const char* shape;
};

void expect_values(const CsvRow& row, const double (&expected)[4], const std::string& record) {
    ASSERT_EQ(row.value_count, 4) << record;
    for (int k = 0; k < 4; ++k) {
        if (std::isnan(expected[k])) {
            EXPECT_TRUE(std::isnan(row.values[k])) << record << " op " << k;
        } else {
            EXPECT_EQ(row.values[k], expected[k]) << record << " op " << k;  // exact, not near
        }
    }
}

TEST(MsprobeCsv, parses_every_row_of_the_grad_reduced_sample_exactly) {
    const CsvSchema s = schema_of(kGradReducedHeader);
    const double nan = std::nan("");
    const ExpectedRow rows[] = {
        {"0,module.module.embedding.word_embeddings.weight,0,0.872913,-0.003447,0.003502,0.0,\"[25216, "
         "1024]\","
         "torch.float32",
         "module.module.embedding.word_embeddings.weight",
         0,
         {0.872913, -0.003447, 0.003502, 0.0},
         "[25216, 1024]"},
        {"0,module.module.decoder.layers.0.self_attention.linear_qkv.weight,0,0.41227,-0.00193,0.002061,0.0,"
         "\"[3072, 1024]\",torch.float32",
         "module.module.decoder.layers.0.self_attention.linear_qkv.weight",
         0,
         {0.41227, -0.00193, 0.002061, 0.0},
         "[3072, 1024]"},
        {"0,module.module.decoder.final_layernorm.weight,0,0.000312,-9e-06,1.1e-05,0.0,[1024],torch.float32",
         "module.module.decoder.final_layernorm.weight",
         0,
         {0.000312, -9e-06, 1.1e-05, 0.0},
         "[1024]"},
        {"0,module.module.embedding.word_embeddings.weight,1,0.790144,-0.003012,0.003119,0.0,\"[25216, "
         "1024]\","
         "torch.float32",
         "module.module.embedding.word_embeddings.weight",
         1,
         {0.790144, -0.003012, 0.003119, 0.0},
         "[25216, 1024]"},
        {"0,module.module.decoder.layers.0.self_attention.linear_qkv.weight,1,0.398802,-0.001874,0.00199,0.0,"
         "\"[3072, 1024]\",torch.float32",
         "module.module.decoder.layers.0.self_attention.linear_qkv.weight",
         1,
         {0.398802, -0.001874, 0.00199, 0.0},
         "[3072, 1024]"},
        {"0,module.module.decoder.final_layernorm.weight,1,0.000287,-8e-06,1e-05,0.0,[1024],torch.float32",
         "module.module.decoder.final_layernorm.weight",
         1,
         {0.000287, -8e-06, 1e-05, 0.0},
         "[1024]"},
        {"0,module.module.embedding.word_embeddings.weight,2,nan,nan,nan,17.0,\"[25216, "
         "1024]\",torch.float32",
         "module.module.embedding.word_embeddings.weight",
         2,
         {nan, nan, nan, 17.0},
         "[25216, 1024]"},
        {"0,module.module.decoder.layers.0.self_attention.linear_qkv.weight,2,0.402315,-0.001901,0.002007,0."
         "0,"
         "\"[3072, 1024]\",torch.float32",
         "module.module.decoder.layers.0.self_attention.linear_qkv.weight",
         2,
         {0.402315, -0.001901, 0.002007, 0.0},
         "[3072, 1024]"},
        {"0,module.module.decoder.final_layernorm.weight,2,0.000301,-9e-06,1.1e-05,0.0,[1024],torch.float32",
         "module.module.decoder.final_layernorm.weight",
         2,
         {0.000301, -9e-06, 1.1e-05, 0.0},
         "[1024]"},
    };
    for (const auto& e : rows) {
        ParsedRow p = parse_row(s, e.record);
        ASSERT_TRUE(p.ok) << e.record << ": " << p.error;
        EXPECT_EQ(p.vpp, "0");
        EXPECT_EQ(p.name, e.name);
        EXPECT_EQ(p.row.step, e.step);
        EXPECT_FALSE(p.row.micro_step.has_value());
        EXPECT_EQ(p.shape, e.shape);
        EXPECT_EQ(p.dtype, "torch.float32");
        expect_values(p.row, e.values, e.record);
    }
}

TEST(MsprobeCsv, parses_every_row_of_the_actv_sample_with_micro_steps) {
    const CsvSchema s = schema_of(kActvHeader);
    const double nan = std::nan("");
    struct Expected {
        const char* record;
        const char* name;
        std::int64_t micro;
        double values[4];
        const char* shape;
        const char* dtype;
    };
    const Expected rows[] = {
        {"0,module.module.decoder.layers.0.mlp.input,0,0,-4.53125,4.875,1156.930447,0.0,\"[4096, 1, 1024]\","
         "torch.bfloat16",
         "module.module.decoder.layers.0.mlp.input",
         0,
         {-4.53125, 4.875, 1156.930447, 0.0},
         "[4096, 1, 1024]",
         "torch.bfloat16"},
        {"0,module.module.decoder.layers.0.mlp.output_0,0,0,-2.015625,1.90625,402.118583,0.0,\"[4096, 1, "
         "1024]\","
         "torch.bfloat16",
         "module.module.decoder.layers.0.mlp.output_0",
         0,
         {-2.015625, 1.90625, 402.118583, 0.0},
         "[4096, 1, 1024]",
         "torch.bfloat16"},
        {"0,module.module.decoder.layers.0.mlp.output_1,0,0,nan,nan,nan,nan,nan,nan",
         "module.module.decoder.layers.0.mlp.output_1",
         0,
         {nan, nan, nan, nan},
         "nan",
         "nan"},
        {"0,module.module.decoder.layers.0.mlp.input,0,1,-4.6875,5.03125,1160.2284,0.0,\"[4096, 1, 1024]\","
         "torch.bfloat16",
         "module.module.decoder.layers.0.mlp.input",
         1,
         {-4.6875, 5.03125, 1160.2284, 0.0},
         "[4096, 1, 1024]",
         "torch.bfloat16"},
        {"0,module.module.decoder.layers.0.mlp.output_0,0,1,-1.984375,1.9375,401.777061,0.0,\"[4096, 1, "
         "1024]\","
         "torch.bfloat16",
         "module.module.decoder.layers.0.mlp.output_0",
         1,
         {-1.984375, 1.9375, 401.777061, 0.0},
         "[4096, 1, 1024]",
         "torch.bfloat16"},
        {"0,module.module.decoder.layers.0.mlp.output_1,0,1,nan,nan,nan,nan,nan,nan",
         "module.module.decoder.layers.0.mlp.output_1",
         1,
         {nan, nan, nan, nan},
         "nan",
         "nan"},
    };
    for (const auto& e : rows) {
        ParsedRow p = parse_row(s, e.record);
        ASSERT_TRUE(p.ok) << e.record << ": " << p.error;
        EXPECT_EQ(p.name, e.name);
        EXPECT_EQ(p.row.step, 0);
        ASSERT_TRUE(p.row.micro_step.has_value());
        EXPECT_EQ(*p.row.micro_step, e.micro);
        EXPECT_EQ(p.shape, e.shape);
        EXPECT_EQ(p.dtype, e.dtype);
        expect_values(p.row, e.values, e.record);
    }
}

TEST(MsprobeCsv, parses_monitor_v2_row_with_scope_and_micro_step) {
    const CsvSchema s = schema_of(kV2Header);
    ParsedRow p = parse_row(s, "-1,4,0:decoder.layers.0.weight,reduced,2,-0.5,0.5,1e-06,1.25,0.0");
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.vpp, "-1");
    EXPECT_EQ(p.row.step, 4);
    EXPECT_EQ(p.name, "0:decoder.layers.0.weight");
    EXPECT_EQ(p.scope, "reduced");
    ASSERT_TRUE(p.row.micro_step.has_value());
    EXPECT_EQ(*p.row.micro_step, 2);
    ASSERT_EQ(p.row.value_count, 5);
    EXPECT_EQ(p.row.values[0], -0.5);
    EXPECT_EQ(p.row.values[1], 0.5);
    EXPECT_EQ(p.row.values[2], 1e-06);
    EXPECT_EQ(p.row.values[3], 1.25);
    EXPECT_EQ(p.row.values[4], 0.0);
    EXPECT_TRUE(p.shape.empty());
    EXPECT_TRUE(p.dtype.empty());
}

TEST(MsprobeCsv, v2_cc_row_with_empty_vpp_stage_is_accepted) {
    const CsvSchema s = schema_of("vpp_stage,step,module_name,scope,min,max");
    ParsedRow p = parse_row(s, ",3,all_reduce,comm,inf,-inf");
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.vpp, "");
    EXPECT_EQ(p.scope, "comm");
    EXPECT_TRUE(std::isinf(p.row.values[0]) && p.row.values[0] > 0);
    EXPECT_TRUE(std::isinf(p.row.values[1]) && p.row.values[1] < 0);
}

TEST(MsprobeCsv, integer_count_and_negative_zero_cells_are_numbers) {
    const CsvSchema s = schema_of("vpp_stage,name,step,min,nans");
    ParsedRow p = parse_row(s, "0,w,7,-0.0,17");
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.row.values[0], 0.0);
    EXPECT_TRUE(std::signbit(p.row.values[0]));
    EXPECT_EQ(p.row.values[1], 17.0);
}

TEST(MsprobeCsv, malformed_cc_row_with_too_few_fields_is_rejected) {
    const CsvSchema s = schema_of(kGradReducedHeader);
    ParsedRow p = parse_row(s, "all_reduce,0.5,3,0.1,0.2");
    EXPECT_FALSE(p.ok);
    EXPECT_NE(p.error.find('5'), std::string::npos) << p.error;
    EXPECT_NE(p.error.find('9'), std::string::npos) << p.error;
}

TEST(MsprobeCsv, row_with_more_fields_than_header_is_rejected) {
    const CsvSchema s = schema_of("vpp_stage,name,step,norm,shape,dtype");
    ParsedRow p = parse_row(s, "0,w,1,0.5,0.6,[2],torch.float32");
    EXPECT_FALSE(p.ok);
    EXPECT_FALSE(p.error.empty());
}

TEST(MsprobeCsv, non_integer_step_is_rejected) {
    const CsvSchema s = schema_of(kGradReducedHeader);
    for (const char* step : {"1.5", "abc", "", "1e3", "nan"}) {
        ParsedRow p = parse_row(s, std::string("0,w,") + step + ",0.1,0.2,0.3,0.0,[2],torch.float32");
        EXPECT_FALSE(p.ok) << "step '" << step << "' accepted";
        EXPECT_NE(p.error.find("step"), std::string::npos) << p.error;
    }
}

TEST(MsprobeCsv, non_integer_micro_step_is_rejected) {
    const CsvSchema s = schema_of(kActvHeader);
    ParsedRow p = parse_row(s, "0,m.input,0,x,1,2,3,0.0,[2],torch.bfloat16");
    EXPECT_FALSE(p.ok);
    EXPECT_NE(p.error.find("micro_step"), std::string::npos) << p.error;
}

TEST(MsprobeCsv, non_numeric_op_cell_is_rejected_and_named) {
    const CsvSchema s = schema_of(kGradReducedHeader);
    ParsedRow p = parse_row(s, "0,w,1,0.5,oops,0.3,0.0,[2],torch.float32");
    EXPECT_FALSE(p.ok);
    EXPECT_NE(p.error.find("min"), std::string::npos) << p.error;
    ParsedRow empty = parse_row(s, "0,w,1,0.5,,0.3,0.0,[2],torch.float32");
    EXPECT_FALSE(empty.ok);
}

TEST(MsprobeCsv, reused_row_does_not_keep_values_from_a_previous_row) {
    const CsvSchema with_micro = schema_of(kActvHeader);
    const CsvSchema without_micro = schema_of("vpp_stage,name,step,norm");
    std::string error;
    CsvRow row;
    Fields first("0,m.input,3,1,1,2,3,0.0,[2],torch.bfloat16");
    ASSERT_TRUE(parse_csv_row(with_micro, first.views, row, error)) << error;
    ASSERT_TRUE(row.micro_step.has_value());
    Fields second("0,w,4,0.25");
    ASSERT_TRUE(parse_csv_row(without_micro, second.views, row, error)) << error;
    EXPECT_FALSE(row.micro_step.has_value());
    EXPECT_EQ(row.value_count, 1);
    EXPECT_EQ(row.values[0], 0.25);
    EXPECT_TRUE(row.shape.empty());
    EXPECT_TRUE(row.dtype.empty());
}

// msprobe's communication rows in other_*.csv: the tag has no "<vpp>:", so the step lands after the first value
// ("all_reduce,<v0>,<step>,<v1>,..."), and one op's tensors run together in one row.
TEST(MsprobeCsv, a_cc_row_of_one_tensor_is_read_and_one_of_several_is_told_apart) {
    const CsvSchema schema = schema_of("vpp_stage,name,step,min,max,norm,nans");
    CsvRow row;
    std::string error;
    Fields one("all_reduce,-0.5,7,0.25,1.5,0.0");
    ASSERT_FALSE(parse_csv_row(schema, one.views, row, error)) << "one field short of the header";
    ASSERT_EQ(parse_cc_row(schema, one.views, row), CcRow::read);
    EXPECT_EQ(row.name, "all_reduce");
    EXPECT_EQ(row.vpp_stage, "");
    EXPECT_EQ(row.step, 7);
    ASSERT_EQ(row.value_count, 4);
    EXPECT_EQ(row.values[0], -0.5);  // min: the value before the step
    EXPECT_EQ(row.values[1], 0.25);
    EXPECT_EQ(row.values[2], 1.5);
    EXPECT_EQ(row.values[3], 0.0);
    Fields several("all_reduce,-0.5,7,0.25,1.5,0.0,-0.4,0.2,1.4,0.0");
    EXPECT_EQ(parse_cc_row(schema, several.views, row), CcRow::several_tensors);
    // Not cc rows: a row with a vpp stage, a step that is no number where cc puts it, a name that is a number.
    for (const char* text : {"0,layers.0.w,7,0.1,0.2", "all_reduce,-0.5,x,0.25,1.5,0.0", "3,-0.5,7,0.25,1.5,0.0"}) {
        Fields f(text);
        EXPECT_EQ(parse_cc_row(schema, f.views, row), CcRow::not_cc) << text;
    }
    // A header with micro_step (or another order) gives no layout to recover from.
    Fields again("all_reduce,-0.5,7,0.25,1.5");
    EXPECT_EQ(parse_cc_row(schema_of("vpp_stage,name,step,micro_step,min,max,norm,nans"), again.views, row),
              CcRow::not_cc);
}

}  // namespace
}  // namespace msmon
