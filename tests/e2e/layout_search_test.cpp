// Jobs whose output folders have other names than msmon's defaults are found by the names of what is inside
// them: msprobe's rank folders under a custom MONITOR_OUTPUT_DIR, MindFormers' event files under
// worker/tensorboard. A folder with nothing msmon reads says so and exits 1; a follower started before the job
// waits for the folder and reads it when it appears.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// Every stored value as "kind|name|rank|step|op=value", sorted: two stores are equal when these are.
std::vector<std::string> all_values(const std::string& db, const std::map<std::string, std::string>& env) {
    std::string error;
    std::vector<std::string> out;
    for (const auto& r : query_rows(db, {}, env, error))
        out.push_back(r.kind + "|" + r.name + "|" + r.rank + "|" + r.step + "|" + r.op + "=" + r.value);
    EXPECT_EQ(error, "");
    std::sort(out.begin(), out.end());
    return out;
}

TEST(LayoutSearch, a_renamed_msprobe_folder_and_worker_tensorboard_are_read_whole_from_the_job_folder) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string job = tmp / "job";
    ASSERT_EQ(
        run({program("msmon"), "simulate", job, "--ranks", "2", "--steps", "8", "--logs", "--tensorboard"}).exit_code,
        0);
    ASSERT_EQ(run({program("msmon"), "ingest", job, "--db", tmp / "default.db"}, env).exit_code, 0);
    const auto expected = all_values(tmp / "default.db", env);
    ASSERT_GT(expected.size(), 1000u);

    // The same job as another launcher lays it out: MONITOR_OUTPUT_DIR=probe_stats/run_a, MindFormers' output
    // under worker/ (its logs in worker/log, its event files in worker/tensorboard).
    const std::string moved = tmp / "moved";
    fs::create_directories(moved + "/probe_stats");
    fs::rename(job + "/monitor_output", moved + "/probe_stats/run_a");
    fs::rename(job + "/output", moved + "/worker");
    ASSERT_TRUE(fs::is_directory(moved + "/worker/tensorboard/rank_1"));
    const auto r = run({program("msmon"), "ingest", moved, "--db", tmp / "moved.db"}, env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(all_values(tmp / "moved.db", env), expected) << "every value of the default layout, no more";

    // Below 4 levels of unknown names nothing is looked for.
    const std::string deep = tmp / "deep/a/b/c/d";
    fs::create_directories(deep);
    fs::rename(moved + "/probe_stats", deep + "/probe_stats");
    const auto too_deep = run({program("msmon"), "ingest", tmp / "deep", "--db", tmp / "deep.db"}, env);
    EXPECT_EQ(too_deep.exit_code, 1) << too_deep.out;
}

TEST(LayoutSearch, a_folder_with_nothing_msmon_reads_says_what_it_looked_for_and_exits_1) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    fs::create_directories(tmp / "job/checkpoint/rank_0");
    write_file(tmp / "job/notes.txt", "nothing here\n");
    write_file(tmp / "job/checkpoint/rank_0/model.ckpt", "weights");
    const auto r = run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "store.db"}, env);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("nothing msmon reads under " + (tmp / "job")), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("msprobe rank folders (<Mon><DD>_<HH>-<MM>-<SS>-rank<N>-<id8>"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("TensorBoard event files"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("ingested 0 files"), std::string::npos) << "no summary of nothing: " << r.out;
}

TEST(LayoutSearch, a_follower_on_an_empty_folder_says_what_it_waits_for) {
    TempDir tmp;
    fs::create_directories(tmp / "job");
    Background follower({program("msmon"), "ingest", tmp / "job", "--follow", "--db", tmp / "store.db"}, tmp.path(),
                        isolated_env(tmp));
    const std::string said = "nothing msmon reads under " + (tmp / "job") + " yet: waiting for it. It looks for";
    EXPECT_LT(wait_until([&] { return follower.err().find(said) != std::string::npos; }, milliseconds(10000)).count(),
              10000)
        << follower.err();
    follower.signal(SIGTERM);
    EXPECT_EQ(follower.wait(milliseconds(5000)), 0) << follower.err();
}

TEST(LayoutSearch, a_follower_started_before_the_job_waits_for_its_folder_and_reads_it) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string job = tmp / "job";  // not there yet
    const std::string db = tmp / "store.db";
    Background follower({program("msmon"), "ingest", job, "--follow", "--db", db}, tmp.path(), env);
    ASSERT_LT(wait_until([&] { return follower.err().find("does not exist yet: waiting for it") != std::string::npos; },
                         milliseconds(10000))
                  .count(),
              10000)
        << follower.err();
    // 2 s later the job makes its folder, first empty, then with its output.
    std::this_thread::sleep_for(milliseconds(2000));  // the job's start, not a wait on msmon
    ASSERT_EQ(run({program("msmon"), "simulate", tmp / "staged", "--ranks", "2", "--steps", "5"}).exit_code, 0);
    fs::create_directories(job);
    ASSERT_LT(wait_until([&] { return follower.err().find("appeared: reading it") != std::string::npos; },
                         milliseconds(10000))
                  .count(),
              10000)
        << follower.err();
    ASSERT_EQ(run({program("msmon"), "ingest", tmp / "staged", "--db", tmp / "reference.db"}, env).exit_code, 0);
    const auto expected = all_values(tmp / "reference.db", env);
    fs::rename(tmp / "staged/monitor_output", job + "/monitor_output");
    std::vector<std::string> got;
    wait_until(
        [&] {
            got = all_values(db, env);
            return got == expected;
        },
        milliseconds(15000));
    EXPECT_EQ(got.size(), expected.size()) << follower.err();
    EXPECT_TRUE(got == expected) << "the follower's store is not the job's";
    follower.signal(SIGTERM);
    EXPECT_EQ(follower.wait(milliseconds(5000)), 0) << follower.err();
}

}  // namespace
}  // namespace msmon::test
