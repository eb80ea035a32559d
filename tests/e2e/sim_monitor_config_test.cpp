// `msmon simulate --monitor-config FILE` follows msprobe's monitor config as TrainerMon does: static mode collects
// what the file said at start; with DYNAMIC_MONITOR=True, an edit made while the job runs (msmon config enable)
// collects exactly collect_times steps from the next step, then the file says dynamic_on false again.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

// Each rank folder's grad_reduced steps.
std::vector<std::set<std::int64_t>> steps_by_rank(const std::string& output) {
    std::vector<std::set<std::int64_t>> out;
    const std::regex name(R"(grad_reduced_(\d+)-\d+\.csv)");
    std::error_code ec;
    for (const auto& folder : std::filesystem::directory_iterator(output, ec)) {
        out.emplace_back();
        for (const auto& file : std::filesystem::directory_iterator(folder.path())) {
            std::smatch m;
            const std::string f = file.path().filename().string();
            if (std::regex_match(f, m, name)) out.back().insert(std::stoll(m[1]));
        }
    }
    return out;
}

TEST(SimMonitorConfig, static_mode_writes_the_steps_the_config_collects) {
    TempDir tmp;
    write_file(tmp / "config.json", R"({"start_step": 5, "collect_times": 4, "step_interval": 2})");
    const auto r = run({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--steps", "30", "--params", "4",
                        "--monitor-config", tmp / "config.json"},
                       isolated_env(tmp));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto ranks = steps_by_rank(tmp / "job/monitor_output");
    ASSERT_EQ(ranks.size(), 2u);
    for (const auto& steps : ranks) EXPECT_EQ(steps, (std::set<std::int64_t>{5, 7, 9, 11}));
}

TEST(SimMonitorConfig, dynamic_mode_collects_collect_times_steps_after_an_edit_and_writes_dynamic_on_false_back) {
    TempDir tmp;
    const std::string cfg = tmp / "config.json";
    write_file(cfg, R"({"dynamic_on": false, "collect_times": 1, "xy_distribution": false})");
    auto env = isolated_env(tmp);
    env["DYNAMIC_MONITOR"] = "True";
    Background sim({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--steps", "60", "--step-ms", "100",
                    "--params", "4", "--monitor-config", cfg},
                   tmp.path(), env);
    // The job runs and collects nothing until the edit.
    ASSERT_GE(
        wait_until([&] { return steps_by_rank(tmp / "job/monitor_output").size() == 2; }, milliseconds(10000)).count(),
        0);
    for (const auto& steps : steps_by_rank(tmp / "job/monitor_output")) EXPECT_TRUE(steps.empty());
    // --settle-ms 0: no collection runs before this edit, so no rank's write-back can race it. With the default
    // 300 ms, the collection it starts (3 steps of 100 ms) can end and be written back inside the window, which the
    // save takes for a racing write-back and applies again: a second collection (seen under CI's load).
    const auto r = run({program("msmon"), "config", "enable", cfg, "--collect-times", "3", "--settle-ms", "0"}, env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The simulator writes back in place, as msprobe does (truncate, then write): a poll can read an empty or half
    // file, which is not yet the write-back.
    const auto written_back = [&] {
        const auto now = nlohmann::json::parse(read_file(cfg), nullptr, /*allow_exceptions=*/false);
        return now.is_object() && now.value("dynamic_on", true) == false;
    };
    ASSERT_GE(wait_until(written_back, milliseconds(10000)).count(), 0)
        << "msprobe's write-back never came: " << read_file(cfg);
    EXPECT_EQ(sim.wait(milliseconds(20000)), 0) << sim.err();
    const auto ranks = steps_by_rank(tmp / "job/monitor_output");
    ASSERT_EQ(ranks.size(), 2u);
    ASSERT_EQ(ranks[0].size(), 3u);
    const std::int64_t first = *ranks[0].begin();
    EXPECT_GT(first, 0);
    for (const auto& steps : ranks) EXPECT_EQ(steps, (std::set<std::int64_t>{first, first + 1, first + 2}));
}

}  // namespace
}  // namespace msmon::test
