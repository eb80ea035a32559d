// msprobe's config validation, field by field: what it rejects, what it silently replaces.
#include "core/config/monitor_config_fields.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "core/config/monitor_config_schema.hpp"

namespace msmon {
namespace {

using json = nlohmann::ordered_json;

struct Case {
    const char* json_text;
    enum { accepted, rejected, warned } expect;
};

class ConfigValidation : public ::testing::TestWithParam<Case> {};

TEST_P(ConfigValidation, matches_msprobe) {
    const Case& c = GetParam();
    const ConfigCheck r = validate_monitor_config(json::parse(c.json_text));
    switch (c.expect) {
        case Case::accepted:
            EXPECT_TRUE(r.errors.empty() && r.warnings.empty())
                << c.json_text << (r.errors.empty() ? "" : ": " + r.errors[0])
                << (r.warnings.empty() ? "" : ": " + r.warnings[0]);
            break;
        case Case::rejected:
            EXPECT_FALSE(r.errors.empty()) << c.json_text;
            break;
        case Case::warned:
            EXPECT_TRUE(r.errors.empty()) << c.json_text << ": " << (r.errors.empty() ? "" : r.errors[0]);
            EXPECT_FALSE(r.warnings.empty()) << c.json_text;
            break;
    }
}

INSTANTIATE_TEST_SUITE_P(
    EveryField, ConfigValidation,
    ::testing::Values(
        Case{R"({})", Case::accepted}, Case{R"([])", Case::rejected}, Case{R"(null)", Case::rejected},
        Case{R"({"targets": {"layers.0": {}}})", Case::accepted}, Case{R"({"targets": []})", Case::rejected},
        Case{R"({"targets": {"x": 1}})", Case::rejected}, Case{R"({"dynamic_on": true})", Case::accepted},
        Case{R"({"dynamic_on": 1})", Case::rejected}, Case{R"({"start_step": 5})", Case::accepted},
        Case{R"({"start_step": -1})", Case::warned}, Case{R"({"start_step": true})", Case::warned},
        Case{R"({"collect_times": 0})", Case::accepted}, Case{R"({"collect_times": 1.5})", Case::warned},
        Case{R"({"step_interval": 2})", Case::accepted}, Case{R"({"step_interval": 0})", Case::warned},
        Case{R"({"print_struct": false})", Case::accepted}, Case{R"({"print_struct": true})", Case::warned},
        Case{R"({"print_struct": "yes"})", Case::rejected}, Case{R"({"module_ranks": [0, 3]})", Case::accepted},
        Case{R"({"module_ranks": [true]})", Case::rejected}, Case{R"({"module_ranks": 0})", Case::rejected},
        Case{R"({"ur_distribution": true})", Case::warned}, Case{R"({"ur_distribution": 0})", Case::rejected},
        Case{R"({"xy_distribution": true})", Case::accepted}, Case{R"({"xy_distribution": "true"})", Case::rejected},
        Case{R"({"forward_only": true, "backward_only": true})", Case::warned},
        Case{R"({"wg_distribution": true})", Case::accepted}, Case{R"({"wg_distribution": null})", Case::rejected},
        Case{R"({"monitor_mbs_grad": 1})", Case::warned}, Case{R"({"param_distribution": true})", Case::accepted},
        Case{R"({"param_distribution": 1})", Case::rejected},
        Case{R"({"cc_distribution": {"enable": true, "cc_codeline": []}})", Case::accepted},
        Case{R"({"cc_distribution": {"colour": true}})", Case::rejected},
        Case{R"({"cc_distribution": {"cc_log_only": true}})", Case::warned},
        Case{R"({"alert": {"rules": [{"rule_name": "AnomalyTurbulence", "args": {"threshold": 0.5}}], "dump": true}})",
             Case::accepted},
        Case{R"({"alert": {"dump": true}})", Case::rejected},
        Case{R"({"alert": {"rules": [{"rule_name": "AnomalySpike"}]}})", Case::rejected},
        Case{R"({"alert": {"rules": [{"rule_name": "AnomalyNan", "args": {"threshold": -1}}]}})", Case::rejected},
        Case{R"({"alert": {"rules": [{"rule_name": "AnomalyTurbulence"}]}})", Case::warned},
        Case{R"({"format": "csv"})", Case::accepted}, Case{R"({"format": "tensorboard"})", Case::warned},
        Case{R"({"ops": ["norm", "max"]})", Case::accepted}, Case{R"({"ops": ["norm", "p99"]})", Case::warned},
        Case{R"({"ops": "norm"})", Case::rejected}, Case{R"({"eps": 1e-08})", Case::accepted},
        Case{R"({"eps": 0})", Case::rejected}, Case{R"({"eps": 1})", Case::rejected},
        Case{R"({"ndigits": 16})", Case::accepted}, Case{R"({"ndigits": 0})", Case::accepted},
        Case{R"({"ndigits": 21})", Case::rejected}, Case{R"({"ndigits": 6.5})", Case::rejected},
        Case{R"({"step_count_per_record": 5})", Case::accepted},
        Case{R"({"step_count_per_record": 0})", Case::rejected},
        Case{R"({"step_count_per_record": 1000001})", Case::rejected}, Case{R"({"append_output": []})", Case::accepted},
        Case{R"({"append_output": ["Dec03_21-34-40"]})", Case::rejected},
        Case{R"({"squash_name": true})", Case::accepted}, Case{R"({"squash_name": 1})", Case::rejected},
        Case{R"({"l2_targets": {"linear_hook": []}})", Case::accepted},
        Case{R"({"l2_targets": {"conv_hook": []}})", Case::rejected},
        Case{R"({"recording_l2_features": true})", Case::accepted},
        Case{R"({"sa_order": "b, s, h, d"})", Case::accepted}, Case{R"({"sa_order": "h,s,b,d"})", Case::rejected},
        Case{R"({"some_future_key": 1})", Case::accepted}));

TEST(ConfigFields, the_table_names_every_field_once_and_marks_what_aborts_training) {
    std::set<std::string> names, aborting;
    for (const auto& f : monitor_config_fields()) {
        EXPECT_TRUE(names.insert(f.name).second) << f.name;
        if (f.aborts_training) aborting.insert(f.name);
    }
    EXPECT_EQ(names.size(), 30u);
    EXPECT_EQ(aborting, (std::set<std::string>{"print_struct", "cc_distribution"}));
}

}  // namespace
}  // namespace msmon

namespace msmon {
namespace {

TEST(ShippedConfigs, every_config_in_configs_passes_msprobe_validation_with_no_warning) {
    int seen = 0;
    for (const auto& e : std::filesystem::directory_iterator(std::string(MSMON_SOURCE_DIR) + "/configs")) {
        if (e.path().extension() != ".json") continue;
        ++seen;
        std::ifstream in(e.path());
        const auto doc = nlohmann::ordered_json::parse(in);
        // Each by its own version's rules (monitor-v2-*.json is a monitor_v2 config).
        const bool v2 = e.path().filename().string().rfind("monitor-v2-", 0) == 0;
        EXPECT_EQ(monitor_config_version(doc), v2 ? MonitorConfigVersion::v2 : MonitorConfigVersion::v1) << e.path();
        const ConfigCheck r = check_monitor_config(doc);
        EXPECT_TRUE(r.errors.empty()) << e.path() << ": " << (r.errors.empty() ? "" : r.errors[0]);
        EXPECT_TRUE(r.warnings.empty()) << e.path() << ": " << (r.warnings.empty() ? "" : r.warnings[0]);
        if (!v2) {
            EXPECT_TRUE(doc["eps"].is_number_float()) << e.path();
        }
    }
    EXPECT_EQ(seen, 4);
}

}  // namespace
}  // namespace msmon

#include "core/config/config_file.hpp"

namespace msmon {
namespace {

TEST(ConfigText, a_bom_is_skipped_blank_text_is_empty_and_a_cut_document_is_an_error) {
    nlohmann::ordered_json doc;
    std::string error;
    ASSERT_TRUE(parse_monitor_config_text("\xEF\xBB\xBF{\"dynamic_on\": true, \"eps\": 1e-08}", doc, error)) << error;
    EXPECT_EQ(doc["dynamic_on"], true);
    EXPECT_EQ(doc.begin().key(), "dynamic_on");
    EXPECT_FALSE(parse_monitor_config_text(" \n\t", doc, error));
    EXPECT_EQ(error, "the file is empty");
    error.clear();
    EXPECT_FALSE(parse_monitor_config_text("{\"dynamic_on\": tr", doc, error));
    EXPECT_NE(error.find("parse error"), std::string::npos) << error;
    EXPECT_FALSE(parse_monitor_config_text("[1e999999]", doc, error));  // a number out of a double's range
}

}  // namespace
}  // namespace msmon
