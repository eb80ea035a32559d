// Which steps msprobe collects, as the simulator and the tests' replays follow the monitor config (spec
// static and dynamic mode, and the write-back), on a real file: static mode reads it once; dynamic mode starts a
// collection at the step after a change that turns dynamic_on true, stops after collect_times (0: one more step) and
// writes dynamic_on false back.
#include "core/sim/monitor_config_follower.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/test_env.hpp"

namespace msmon {
namespace {

using test::TempDir;
using json = nlohmann::ordered_json;

// Steps first..last run through the follower; the ones it collects.
std::vector<std::int64_t> run_steps(MonitorConfigFollower& f, std::int64_t first, std::int64_t last) {
    std::vector<std::int64_t> out;
    for (std::int64_t s = first; s <= last; ++s) {
        if (f.collects(s)) out.push_back(s);
        f.finish_step(s);
    }
    return out;
}

TEST(MonitorConfigFollower, static_mode_collects_collect_times_steps_from_start_step_step_interval_apart) {
    TempDir tmp;
    const std::string cfg = tmp / "config.json";
    test::write_file(cfg, R"({"start_step": 2, "collect_times": 3, "step_interval": 2, "dynamic_on": false})");
    MonitorConfigFollower f(cfg, false);
    EXPECT_EQ(run_steps(f, 0, 20), (std::vector<std::int64_t>{2, 4, 6}));
    EXPECT_EQ(json::parse(test::read_file(cfg))["dynamic_on"], false);
}

TEST(MonitorConfigFollower, dynamic_mode_collects_from_the_step_after_a_change_and_writes_dynamic_on_false_back) {
    TempDir tmp;
    const std::string cfg = tmp / "config.json";
    test::write_file(cfg, R"({"collect_times": 2, "dynamic_on": false})");
    MonitorConfigFollower f(cfg, true);
    EXPECT_TRUE(run_steps(f, 0, 4).empty()) << "dynamic_on false collects nothing";
    test::write_file(cfg, R"({"collect_times": 2, "dynamic_on": true})");
    EXPECT_EQ(run_steps(f, 5, 12), (std::vector<std::int64_t>{6, 7})) << "the poll after step 5 starts it at 6";
    const std::string back = test::read_file(cfg);
    EXPECT_EQ(back, "{\n  \"collect_times\": 2,\n  \"dynamic_on\": false\n}") << "indent 2, no trailing newline";
    // Stopped early: collect_times 0 is one more step.
    test::write_file(cfg, R"({"collect_times": 0, "dynamic_on": true})");
    EXPECT_EQ(run_steps(f, 13, 20), (std::vector<std::int64_t>{14}));
    EXPECT_EQ(json::parse(test::read_file(cfg))["dynamic_on"], false);
}

TEST(MonitorConfigFollower, an_invalid_config_starts_nothing) {
    TempDir tmp;
    const std::string cfg = tmp / "config.json";
    test::write_file(cfg, R"({"collect_times": 2, "dynamic_on": false})");
    MonitorConfigFollower f(cfg, true);
    run_steps(f, 0, 2);
    test::write_file(cfg, R"({"collect_times": 2, "dynamic_on": true, "targets": []})");  // msprobe rejects it
    EXPECT_TRUE(run_steps(f, 3, 8).empty());
}

}  // namespace
}  // namespace msmon
