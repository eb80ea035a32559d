// msprobe's dynamic collections followed in the Config tab while a real run is replayed live (its ranks follow the
// monitor config as TrainerMon does): a collection stopped early with `x`, then one started from a shell with
// `msmon config enable`, each summed up as the data has it.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "tests/support/run_replay.hpp"
#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

// The steps rank 0 wrote (its grad_reduced files), ascending.
std::vector<std::int64_t> written_steps(const std::string& output) {
    std::set<std::int64_t> steps;
    const std::regex name(R"(grad_reduced_(\d+)-\d+\.csv)");
    for (const auto& folder : std::filesystem::directory_iterator(output)) {
        if (folder.path().filename().string().find("-rank0-") == std::string::npos) continue;
        for (const auto& file : std::filesystem::directory_iterator(folder.path())) {
            std::smatch m;
            const std::string f = file.path().filename().string();
            if (std::regex_match(f, m, name)) steps.insert(std::stoll(m[1]));
        }
    }
    return {steps.begin(), steps.end()};
}

// "collecting since step S: collected N of M, latest step L" on the screen: {S, N, L}, or empty.
std::vector<long long> collecting(const std::string& screen) {
    std::smatch m;
    static const std::regex line(R"(collecting since step (\d+): collected (\d+) of \d+, latest step (\d+))");
    if (!std::regex_search(screen, m, line)) return {};
    return {std::stoll(m[1]), std::stoll(m[2]), std::stoll(m[3])};
}

TEST(TuiCollections, a_collection_stopped_early_and_one_started_from_a_shell_are_summed_up_as_the_data_says) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    if (shared_dir().empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: no real msprobe run to replay");
    TempDir tmp;
    const std::string source = shared_dir() + "/fixtures/msprobe-faults/healthy";
    auto config = nlohmann::ordered_json::parse(read_file(source + "/config.json"));
    config["dynamic_on"] = false;
    config["collect_times"] = 1;
    const std::string cfg = tmp / "config.json";
    write_file(cfg, config.dump(2));
    const std::string output = tmp / "job/monitor_output";
    std::filesystem::create_directories(output);
    // The job: the real run's 50 steps, 600 ms each, rank 2's files landing 100 ms after the others'; dynamic mode.
    ReplayPlan plan;
    plan.collections = {{0, 49}};
    plan.step_time = milliseconds(600);
    plan.lag[2] = milliseconds(100);
    plan.dynamic_config = cfg;
    std::thread job([&] { replay_msprobe_run(source + "/monitor_output", output, plan); });
    struct JoinAtEnd {
        std::thread& t;
        ~JoinAtEnd() { t.join(); }
    } join_at_end{job};

    TmuxSession t(program("msmon-tui") + " " + (tmp / "job") + " --db " + (tmp / "s.db") + " --config " + cfg, 160, 40,
                  tmux_env(tmp));
    t.send_keys("5", true);
    ASSERT_FALSE(t.wait_for("no msprobe data collected yet", TmuxSession::settle_limit()).empty()) << t.capture();
    // A collection of 20: c, 20, Enter (the review), y.
    t.send_keys("c", true);
    t.send_keys("BSpace");
    t.send_keys("20", true);
    t.send_keys("Enter");
    ASSERT_FALSE(t.wait_for("collect_times: 1 → 20", TmuxSession::settle_limit()).empty()) << t.capture();
    t.send_keys("y", true);
    // Three steps in, the user stops it early: x, y (msprobe collects one more step and writes dynamic_on false).
    std::string screen = t.screen_when(
        [](const std::string& s) {
            const auto c = collecting(s);
            return !c.empty() && c[1] >= 3;
        },
        TmuxSession::settle_limit());
    ASSERT_FALSE(collecting(screen).empty()) << screen;
    t.send_keys("x", true);
    ASSERT_FALSE(t.wait_for("collect_times: 20 → 0", TmuxSession::settle_limit()).empty()) << t.capture();
    t.send_keys("y", true);
    screen = t.wait_for("collection finished at step", TmuxSession::settle_limit());
    ASSERT_FALSE(screen.empty()) << t.capture();
    const auto first = written_steps(output);
    ASSERT_GE(first.size(), 4u);
    EXPECT_EQ(first.back() - first.front() + 1, static_cast<long long>(first.size())) << "not one run of steps";
    const std::string first_summary = "(steps " + std::to_string(first.front()) + "-" + std::to_string(first.back()) +
                                      ", " + std::to_string(first.size()) + " collected)";
    EXPECT_NE(screen.find("collection finished at step " + std::to_string(first.back()) + "?"), std::string::npos)
        << screen;
    EXPECT_NE(screen.find(first_summary), std::string::npos) << screen;

    // A collection of 3 started from a shell. Every frame that shows it collecting counts the steps since it began.
    const auto r = run({program("msmon"), "config", "enable", cfg, "--collect-times", "3"}, tmux_env(tmp));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> seen;
    screen = t.screen_when(
        [&](const std::string& s) {
            if (const auto c = collecting(s); !c.empty()) seen.push_back(s);
            return s.find("collection finished at step") != std::string::npos &&
                   s.find(first_summary) == std::string::npos;
        },
        TmuxSession::settle_limit());
    // The summary may come from the other ranks' files a moment before rank 0's last one lands (the replay writes
    // a step's folders one after another): wait for the job, not for a time.
    auto all = written_steps(output);
    for (const auto until = std::chrono::steady_clock::now() + TmuxSession::settle_limit();
         all.size() < first.size() + 3 && std::chrono::steady_clock::now() < until; all = written_steps(output))
        std::this_thread::sleep_for(milliseconds(20));
    ASSERT_EQ(all.size(), first.size() + 3) << screen;
    const std::int64_t second = all[first.size()];
    for (const auto& s : seen) {
        const auto c = collecting(s);
        EXPECT_EQ(c[0], second) << s;
        EXPECT_EQ(c[1], c[2] - c[0] + 1) << "the count is not the steps since the collection began:\n" << s;
        EXPECT_NE(s.find(" of 3, "), std::string::npos) << s;
    }
    EXPECT_NE(screen.find("(steps " + std::to_string(second) + "-" + std::to_string(second + 2) + ", 3 collected)"),
              std::string::npos)
        << screen;
    t.send_keys("q", true);
}

}  // namespace
}  // namespace msmon::test
