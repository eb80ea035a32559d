// monitor_v2's config rules, field by field, as TrainerMonitorV2 and its monitors apply them: what stops the job
// (an error), what msprobe replaces or ignores (a warning); and telling a v2 config from a v1 one.
#include "core/config/monitor_v2_config_fields.hpp"

#include <gtest/gtest.h>

#include <set>

#include "core/config/monitor_config_schema.hpp"

namespace msmon {
namespace {

using json = nlohmann::ordered_json;

struct Case {
    const char* json_text;
    enum { accepted, rejected, warned } expect;
};

class MonitorV2ConfigValidation : public ::testing::TestWithParam<Case> {};

TEST_P(MonitorV2ConfigValidation, matches_monitor_v2) {
    const Case& c = GetParam();
    const json doc = json::parse(c.json_text);
    ASSERT_EQ(monitor_config_version(doc), MonitorConfigVersion::v2) << c.json_text;
    const ConfigCheck r = check_monitor_config(doc);
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

// Every case has weight_grad on, so that "no monitor enabled" warns only where a case means it.
#define WG R"("monitors": {"weight_grad": {"enabled": true}})"
INSTANTIATE_TEST_SUITE_P(
    EveryField, MonitorV2ConfigValidation,
    ::testing::Values(
        // The instruction doc's own example.
        Case{R"({"framework": "pytorch", "output_dir": "./monitor_v2_out", "rank": [0], "start_step": 0,
                 "step_interval": 1, "step_count_per_record": 1, "collect_times": 100, "format": "csv",
                 "monitors": {"weight_grad": {"enabled": true, "ops": ["min", "max", "mean", "norm", "nans"],
                              "eps": 1e-8, "monitor_mbs_grad": false}}})",
             Case::accepted},
        Case{R"({"monitors": {}})", Case::warned}, Case{R"({"monitors": []})", Case::warned},
        Case{R"({"monitors": {"module": {}}})", Case::accepted},  // module is on unless it says enabled false
        Case{R"({"monitors": {"module": {"enabled": false}}})", Case::warned},
        Case{R"({"framework": "MS", )" WG "}", Case::accepted}, Case{R"({"framework": "jax", )" WG "}", Case::rejected},
        Case{R"({"framework": 1, )" WG "}", Case::rejected}, Case{R"({"format": "csv", )" WG "}", Case::accepted},
        // v1 falls back to csv; monitor_v2 raises.
        Case{R"({"format": "tensorboard", )" WG "}", Case::rejected},
        Case{R"({"output_dir": "/data/mon_v2", )" WG "}", Case::accepted},
        Case{R"({"output_dir": "my out", )" WG "}", Case::rejected},
        Case{R"({"output_dir": 3, )" WG "}", Case::rejected}, Case{R"({"rank": 3, )" WG "}", Case::accepted},
        Case{R"({"rank": [0, 8], )" WG "}", Case::accepted}, Case{R"({"rank": ["0"], )" WG "}", Case::warned},
        Case{R"({"rank": "0", )" WG "}", Case::warned}, Case{R"({"start_step": -1, )" WG "}", Case::warned},
        Case{R"({"start_step": 10, "stop_step": 20, )" WG "}", Case::accepted},
        Case{R"({"start_step": 10, "stop_step": 5, )" WG "}", Case::warned},
        Case{R"({"start_step": 10, "stop_step": 10, )" WG "}", Case::warned},
        Case{R"({"stop_step": null, )" WG "}", Case::accepted},
        // v1 accepts collect_times 0 (dynamic mode's stop); monitor_v2's minimum is 1.
        Case{R"({"collect_times": 0, )" WG "}", Case::warned}, Case{R"({"step_interval": 0, )" WG "}", Case::warned},
        // v1 rejects step_count_per_record 0; monitor_v2 uses 1.
        Case{R"({"step_count_per_record": 0, )" WG "}", Case::warned},
        Case{R"({"patch_optimizer_step": false, )" WG "}", Case::accepted},
        Case{R"({"patch_optimizer_step": "false", )" WG "}", Case::warned},
        Case{R"({"async_write": 1, )" WG "}", Case::warned}, Case{R"({"dynamic_on": true, )" WG "}", Case::warned},
        Case{R"({"alert": {"rules": []}, )" WG "}", Case::warned},
        Case{R"({"monitors": {"fsdp_grad": {"enabled": true}, "weight_grad": {"enabled": true}}})", Case::warned},
        Case{R"({"monitors": {"weight_grad": true}})", Case::warned},
        Case{R"({"monitors": {"weight_grad": {"enabled": true, "ops": ["norm", "zeros"]}}})", Case::warned},
        Case{R"({"monitors": {"weight_grad": {"enabled": true, "ops": 5}}})", Case::warned},
        Case{R"({"monitors": {"weight_grad": {"enabled": true, "eps": 0}}})", Case::warned},
        Case{R"({"monitors": {"weight_grad": {"enabled": true, "eps": "1e-8"}}})", Case::accepted},
        Case{R"({"monitors": {"weight_grad": {"enabled": true, "monitor_mbs_grad": 1}}})", Case::warned},
        Case{R"({"monitors": {"weight_grad": {"enabled": true, "micro_batch_number": 8, "grad_acc_steps": 4}}})",
             Case::accepted},
        Case{R"({"monitors": {"weight_grad": {"enabled": true, "grad_acc_steps": 0}}})", Case::warned},
        Case{R"({"monitors": {"module": {"targets": ["layers.0", "mlp"], "eps": 1e-8}}})", Case::accepted},
        Case{R"({"monitors": {"module": {"targets": "mlp"}}})", Case::warned},
        Case{R"({"monitors": {"module": {"targets": 5}}})", Case::rejected},
        Case{R"({"monitors": {"module": {"targets": [1]}}})", Case::rejected},
        Case{R"({"monitors": {"module": {"eps": "small"}}})", Case::rejected},
        // float() as Python has it, whatever the locale: underscores between digits, inf, blanks; not hex, not "0,5".
        Case{R"({"monitors": {"module": {"eps": " 1_0e-9 "}}})", Case::accepted},
        Case{R"({"monitors": {"module": {"eps": "-Infinity"}}})", Case::accepted},
        Case{R"({"monitors": {"module": {"eps": "0x1p-3"}}})", Case::rejected},
        Case{R"({"monitors": {"module": {"eps": "0,5"}}})", Case::rejected},
        Case{R"({"monitors": {"module": {"eps": "1__0"}}})", Case::rejected},
        // A monitor that is off is never built: its bad eps only warns.
        Case{R"({"monitors": {"optimizer": {"enabled": false, "eps": "small"}, "weight_grad": {"enabled": true}}})",
             Case::warned},
        Case{R"({"monitors": {"optimizer": {"enabled": true, "eps": null}}})", Case::rejected},
        Case{R"({"monitors": {"optimizer": {"enabled": true, "mv_distribution": true}}})", Case::accepted},
        Case{R"({"monitors": {"param": {"enabled": true, "param_distribution": "no"}}})", Case::warned},
        Case{R"({"monitors": {"cc": {"enabled": true, "cc_codeline": [], "cc_pre_hook": false, "cc_log_only": false,
                 "module_ranks": [0, 1]}}})",
             Case::accepted},
        Case{R"({"monitors": {"cc": {"enabled": true, "cc_log_only": true}}})", Case::warned},
        Case{R"({"monitors": {"cc": {"enabled": true, "module_ranks": 0}}})", Case::rejected},
        Case{R"({"monitors": {"cc": {"enabled": true, "cc_codeline": 7}}})", Case::rejected},
        Case{R"({"monitors": {"cc": {"enabled": true, "cc_distribution": {"cc_codeline": ["train.py[23]"]}}}})",
             Case::accepted},
        Case{R"({"monitors": {"cc": {"enabled": true, "cc_distribution": []}}})", Case::rejected},
        Case{R"({"monitors": {"weight_grad": {"enabled": true}}, "my_own_key": 1})", Case::accepted}));
#undef WG

TEST(MonitorConfigVersion, a_config_is_v2_by_its_monitors_object_or_keys_only_monitor_v2_reads) {
    auto version = [](const char* text) { return monitor_config_version(json::parse(text)); };
    EXPECT_EQ(version(R"({"monitors": {}})"), MonitorConfigVersion::v2);
    EXPECT_EQ(version(R"({"stop_step": 10, "collect_times": 5})"), MonitorConfigVersion::v2);
    EXPECT_EQ(version(R"({"output_dir": "./out"})"), MonitorConfigVersion::v2);
    EXPECT_EQ(version(R"({})"), MonitorConfigVersion::v1);
    EXPECT_EQ(version(R"({"dynamic_on": true, "collect_times": 5})"), MonitorConfigVersion::v1);
    EXPECT_EQ(version(R"({"start_step": 0, "format": "csv"})"), MonitorConfigVersion::v1);  // keys both read
    EXPECT_EQ(version(R"({"wg_distribution": true, "rank": [0]})"), MonitorConfigVersion::v1);
    EXPECT_EQ(version(R"([1])"), MonitorConfigVersion::v1);
    // v1's rules stay v1's: collect_times 0 is its stop, step_count_per_record 0 its rejection.
    EXPECT_TRUE(check_monitor_config(json::parse(R"({"collect_times": 0})")).warnings.empty());
    EXPECT_FALSE(check_monitor_config(json::parse(R"({"step_count_per_record": 0})")).ok());
}

TEST(MonitorV2ConfigFields, the_table_names_every_field_once_nested_by_path_and_marks_cc_log_only) {
    std::set<std::string> names, aborting, monitors;
    for (const auto& f : monitor_v2_config_fields()) {
        EXPECT_TRUE(names.insert(f.name).second) << f.name;
        if (f.aborts_training) aborting.insert(f.name);
        const auto path = field_path(f);
        if (path.size() == 3 && path[0] == "monitors") monitors.insert(path[1]);
        else EXPECT_EQ(path.size(), 1u) << f.name;
        EXPECT_FALSE(json::parse(f.fallback, nullptr, false).is_discarded()) << f.name;
    }
    EXPECT_EQ(names.size(), 35u);
    EXPECT_EQ(aborting, (std::set<std::string>{"monitors.cc.cc_log_only"}));
    EXPECT_EQ(monitors, (std::set<std::string>{"module", "weight_grad", "optimizer", "param", "cc"}));
    for (const char* key :
         {"stop_step", "output_dir", "monitors.weight_grad.monitor_mbs_grad", "monitors.weight_grad.micro_batch_number",
          "monitors.optimizer.mv_distribution", "monitors.param.param_distribution", "monitors.cc.module_ranks"})
        EXPECT_TRUE(names.count(key)) << key;
    EXPECT_FALSE(names.count("dynamic_on")) << "monitor_v2 has no dynamic mode";
}

TEST(MonitorV2ConfigFields, cc_log_only_aborts_only_when_cc_is_on_and_the_window_reads_as_msprobe_derives_it) {
    const json on = json::parse(R"({"monitors": {"cc": {"enabled": true, "cc_log_only": true}}})");
    const json off = json::parse(R"({"monitors": {"cc": {"enabled": false, "cc_log_only": true}}})");
    const json nested =
        json::parse(R"({"monitors": {"cc": {"enabled": true, "cc_distribution": {"cc_log_only": true}}}})");
    EXPECT_TRUE(monitor_config_aborts_training(on));
    EXPECT_FALSE(monitor_config_aborts_training(off));
    EXPECT_TRUE(monitor_config_aborts_training(nested));
    // msprobe takes any true value for true: 1 or "yes" must ask as `true` does.
    EXPECT_TRUE(
        monitor_config_aborts_training(json::parse(R"({"monitors": {"cc": {"cc_log_only": 1, "enabled": 1}}})")));
    EXPECT_TRUE(monitor_config_aborts_training(
        json::parse(R"({"monitors": {"cc": {"enabled": true, "cc_log_only": "yes"}}})")));
    EXPECT_FALSE(
        monitor_config_aborts_training(json::parse(R"({"monitors": {"cc": {"enabled": true, "cc_log_only": 0}}})")));
    EXPECT_EQ(
        monitor_v2_window_text(json::parse(
            R"({"start_step": 10, "stop_step": 20, "step_interval": 2, "monitors": {"weight_grad": {"enabled": true}, "module": {}}})")),
        "steps 10-19, every 2 steps; monitors module, weight_grad");
    EXPECT_EQ(
        monitor_v2_window_text(json::parse(R"({"collect_times": 5, "monitors": {"module": {"enabled": false}}})")),
        "from step 0, every step, at most 5 times; no monitor enabled");
}

}  // namespace
}  // namespace msmon
