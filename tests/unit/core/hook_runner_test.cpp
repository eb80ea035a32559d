// The --on-incident runner on its own: a command that never reads its stdin does not kill msmon (SIGPIPE), runs
// wait their turn, a full queue drops and counts, and finish() lets the queue drain.
#include "core/notify/hook_runner.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <mutex>

#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

TEST(HookRunner, a_command_that_exits_without_reading_a_large_input_is_a_success_not_a_sigpipe) {
    std::vector<std::string> notices;
    HookRunner runner({"exit 0", milliseconds(5000), 8, {}}, [&](const std::string& m) { notices.push_back(m); });
    runner.submit({std::string(1 << 20, 'x'), {}});  // far more than a pipe holds
    runner.finish(milliseconds(10000));
    EXPECT_EQ(runner.counters().ran.load(), 1u);
    EXPECT_EQ(runner.counters().failed.load(), 0u);
}

TEST(HookRunner, runs_one_at_a_time_in_order_with_their_input_and_variables) {
    TempDir tmp;
    HookRunner runner({"cat >> '" + tmp.path() + "/log'; echo \" $MSMON_STEP $MSMON_JOB\" >> '" + tmp.path() + "/log'",
                       milliseconds(5000),
                       8,
                       {{"MSMON_JOB", "j"}}},
                      nullptr);
    for (int i = 0; i < 3; ++i) runner.submit({"in" + std::to_string(i), {{"MSMON_STEP", std::to_string(i)}}});
    runner.finish(milliseconds(10000));
    EXPECT_EQ(read_file(tmp / "log"), "in0 0 j\nin1 1 j\nin2 2 j\n");
    EXPECT_EQ(runner.counters().ran.load(), 3u);
}

TEST(HookRunner, a_full_queue_drops_and_counts_and_says_so) {
    std::mutex mu;
    std::vector<std::string> notices;
    HookRunner runner({"sleep 0.3", milliseconds(5000), 2, {}}, [&](const std::string& m) {
        std::lock_guard lock(mu);
        notices.push_back(m);
    });
    int accepted = 0;
    for (int i = 0; i < 6; ++i) accepted += runner.submit({"", {}}) ? 1 : 0;
    EXPECT_GE(accepted, 2);
    EXPECT_LE(accepted, 3);  // two wait, and perhaps one already running
    runner.finish(milliseconds(10000));
    EXPECT_EQ(runner.counters().ran.load(), static_cast<std::uint64_t>(accepted));
    EXPECT_EQ(runner.counters().dropped.load(), static_cast<std::uint64_t>(6 - accepted));
    std::lock_guard lock(mu);
    ASSERT_FALSE(notices.empty());
    EXPECT_NE(notices[0].find("runs already wait"), std::string::npos);
}

// Quitting does not wait out a command's whole timeout: finish() gives it the time it was given, then ends it
// and what it started.
TEST(HookRunner, finish_ends_a_running_command_after_its_limit_and_drops_the_waiting) {
    TempDir tmp;
    std::atomic<int> notices{0};
    HookRunner runner({"sleep 300 & echo $! > '" + tmp.path() + "/child'; sleep 300", milliseconds(60000), 8, {}},
                      [&](const std::string&) { ++notices; });
    runner.submit({"", {}});
    runner.submit({"", {}});
    ASSERT_GE(wait_until([&] { return !read_file(tmp / "child").empty(); }, milliseconds(10000)).count(), 0);
    const auto start = std::chrono::steady_clock::now();
    runner.finish(milliseconds(200));
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << "waited for the 60 s timeout";
    EXPECT_EQ(runner.counters().failed.load(), 1u);
    EXPECT_EQ(runner.counters().timed_out.load(), 0u) << "ended by finish(), not by its timeout";
    EXPECT_EQ(runner.counters().dropped.load(), 1u);
    const pid_t child = std::stoi(read_file(tmp / "child"));
    EXPECT_GE(wait_until(
                  [&] {
                      return ::kill(child, 0) != 0 ||
                             read_file("/proc/" + std::to_string(child) + "/stat").find(") Z") != std::string::npos;
                  },
                  milliseconds(3000))
                  .count(),
              0)
        << "the command's own child outlived it";
    EXPECT_GE(notices.load(), 2);
}

TEST(HookRunner, a_command_that_cannot_be_found_fails_with_the_shells_status) {
    std::atomic<int> n{0};
    std::string last;
    std::mutex mu;
    HookRunner runner({"/no/such/notifier --send", milliseconds(5000), 8, {}}, [&](const std::string& m) {
        std::lock_guard lock(mu);
        last = m;
        ++n;
    });
    runner.submit({"{}", {}});
    runner.finish(milliseconds(10000));
    EXPECT_EQ(runner.counters().failed.load(), 1u);
    std::lock_guard lock(mu);
    EXPECT_NE(last.find("exited with status 127"), std::string::npos) << last;
    EXPECT_NE(last.find("/no/such/notifier"), std::string::npos) << last;
}

}  // namespace
}  // namespace msmon::test
