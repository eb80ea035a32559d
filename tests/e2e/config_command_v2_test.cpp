// `msmon config` on a monitor_v2 config (TrainerMonitorV2): show lists its fields, nested ones by path, with their
// help and monitor_v2's own validation; set edits nested values in place and refuses what monitor_v2 would refuse;
// enable, stop and disable refuse it (no dynamic mode) and say what to do instead.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

using json = nlohmann::ordered_json;

// The monitor_v2 instruction doc's example, written by hand: 2-space indent, one-line lists, 1e-8.
const char* kV2 = R"({
  "framework": "pytorch",
  "output_dir": "./monitor_v2_out",
  "rank": [0],
  "start_step": 0,
  "step_interval": 1,
  "step_count_per_record": 1,
  "collect_times": 100,
  "format": "csv",
  "monitors": {
    "weight_grad": {
      "enabled": true,
      "ops": ["min", "max", "mean", "norm", "nans"],
      "eps": 1e-8,
      "monitor_mbs_grad": false
    }
  }
}
)";

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(ConfigCommandV2, show_lists_the_monitor_v2_fields_with_their_help_and_checks_them_by_its_rules) {
    TempDir tmp;
    const std::string cfg = tmp / "monitor_v2_config.json";
    write_file(cfg, kV2);
    auto r = run({program("msmon"), "config", "show", cfg});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(has(r.out, "msprobe monitor_v2 (TrainerMonitorV2) config")) << r.out;
    EXPECT_TRUE(has(r.out,
                    "read once, when the job starts (no dynamic mode); collects from step 0, every step, at "
                    "most 100 times; monitors weight_grad"))
        << r.out;
    EXPECT_TRUE(has(r.out, "msprobe accepts this config as it is")) << r.out;
    // Every field of the table, nested ones by path, with the value from the file or msprobe's default, the help
    // and the rule.
    for (const char* line :
         {"stop_step ", "output_dir ", "patch_optimizer_step ", "monitors.module.targets ",
          "monitors.optimizer.mv_distribution ", "monitors.param.param_distribution ", "monitors.cc.module_ranks "})
        EXPECT_TRUE(has(r.out, "\n" + std::string(line))) << line << "\n" << r.out;
    EXPECT_TRUE(has(r.out, "monitors.weight_grad.monitor_mbs_grad    bool   false          per micro-batch gradients"))
        << r.out;
    EXPECT_TRUE(has(r.out, "collection ends before this step (excluded)")) << r.out;
    EXPECT_TRUE(has(r.out, "[MAY ABORT TRAINING]")) << r.out;
    EXPECT_FALSE(has(r.out, "\ndynamic_on ")) << "v1's fields are not offered:\n" << r.out;
    EXPECT_FALSE(has(r.out, "\nwg_distribution ")) << r.out;

    auto j = run({program("msmon"), "config", "show", cfg, "--json"});
    ASSERT_EQ(j.exit_code, 0) << j.err;
    const json doc = json::parse(j.out);
    EXPECT_EQ(doc["version"], "v2");
    EXPECT_TRUE(doc["errors"].empty() && doc["warnings"].empty()) << j.out;

    // What monitor_v2 refuses (v1 would only warn about the format) and what it replaces.
    json bad = json::parse(kV2);
    bad["format"] = "tensorboard";
    bad["collect_times"] = 0;
    bad["dynamic_on"] = true;
    bad["monitors"]["module"] = json::parse(R"({"targets": 5})");
    write_file(cfg, bad.dump(2));
    r = run({program("msmon"), "config", "show", cfg});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(has(r.out, "REJECTED by msprobe: format must be csv")) << r.out;
    EXPECT_TRUE(has(r.out, "REJECTED by msprobe: monitors.module.targets must be a list")) << r.out;
    EXPECT_TRUE(has(r.out, "warning: collect_times is not an int >= 1: msprobe uses 100000000")) << r.out;
    EXPECT_TRUE(has(r.out, "warning: dynamic_on is a v1 key: monitor_v2 ignores it")) << r.out;
}

TEST(ConfigCommandV2, set_edits_nested_values_in_place_and_refuses_what_monitor_v2_would_refuse) {
    TempDir tmp;
    const std::string cfg = tmp / "monitor_v2_config.json";
    write_file(cfg, kV2);
    auto r =
        run({program("msmon"), "config", "set", cfg, "monitors.weight_grad.monitor_mbs_grad=true", "stop_step=50"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(has(r.out, "applies at the job's next start")) << r.out;
    // The user's text but for the one value's line, and stop_step added after the last key in the file's indent.
    std::string expected = kV2;
    expected.replace(expected.find("\"monitor_mbs_grad\": false"), 25, "\"monitor_mbs_grad\": true");
    expected.replace(expected.rfind("\n}\n"), 3, ",\n  \"stop_step\": 50\n}\n");
    EXPECT_EQ(read_file(cfg), expected);

    struct stat before {};
    ASSERT_EQ(::stat(cfg.c_str(), &before), 0);
    const std::string text = read_file(cfg);
    for (const std::vector<std::string>& change : {std::vector<std::string>{"format=tensorboard"},
                                                   {"framework=jax"},
                                                   {"monitors.module.eps=\"small\""},
                                                   {"monitors.cc.enabled=true", "monitors.cc.module_ranks=0"}}) {
        std::vector<std::string> argv = {program("msmon"), "config", "set", cfg};
        argv.insert(argv.end(), change.begin(), change.end());
        r = run(argv);
        EXPECT_EQ(r.exit_code, 1) << change[0] << "\n" << r.out;
        EXPECT_TRUE(has(r.err, "not written — msprobe would reject it")) << r.err;
    }
    // cc_log_only (with cc on) may interrupt training: it needs --yes, as v1's print_struct does.
    r = run({program("msmon"), "config", "set", cfg, "monitors.cc.enabled=true", "monitors.cc.cc_log_only=true"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(has(r.err, "monitors.cc.cc_log_only (with monitors.cc enabled) MAY INTERRUPT training")) << r.err;
    struct stat after {};
    ASSERT_EQ(::stat(cfg.c_str(), &after), 0);
    EXPECT_EQ(after.st_ino, before.st_ino) << "a refused change was written";
    EXPECT_EQ(read_file(cfg), text);
    r = run(
        {program("msmon"), "config", "set", cfg, "monitors.cc.enabled=true", "monitors.cc.cc_log_only=true", "--yes"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(has(r.out, "MAY INTERRUPT training")) << r.out;
    EXPECT_EQ(json::parse(read_file(cfg))["monitors"]["cc"], json::parse(R"({"enabled": true, "cc_log_only": true})"));
}

TEST(ConfigCommandV2, enable_stop_and_disable_refuse_a_v2_config_and_say_what_to_do_instead) {
    TempDir tmp;
    const std::string cfg = tmp / "monitor_v2_config.json";
    write_file(cfg, kV2);
    struct stat before {};
    ASSERT_EQ(::stat(cfg.c_str(), &before), 0);
    for (const std::vector<std::string>& action :
         {std::vector<std::string>{"enable", "--collect-times", "5"}, {"stop"}, {"disable"}}) {
        std::vector<std::string> argv = {program("msmon"), "config", action[0], cfg};
        argv.insert(argv.end(), action.begin() + 1, action.end());
        auto r = run(argv);
        EXPECT_EQ(r.exit_code, 1) << action[0] << "\n" << r.out;
        EXPECT_TRUE(has(r.err, "is a monitor_v2 config (TrainerMonitorV2): it has no dynamic mode")) << r.err;
        EXPECT_TRUE(has(r.err, "nothing was written")) << r.err;
        EXPECT_TRUE(has(r.err, "msmon config set " + cfg + " start_step=N stop_step=M")) << r.err;
    }
    struct stat after {};
    ASSERT_EQ(::stat(cfg.c_str(), &after), 0);
    EXPECT_EQ(after.st_ino, before.st_ino);
    EXPECT_EQ(read_file(cfg), kV2);
}

}  // namespace
}  // namespace msmon::test
