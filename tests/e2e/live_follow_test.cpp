// `msmon ingest --follow` sees appended rows, half-written lines, new rank folders and new step files within
// one second — with inotify and with polling.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

const std::string kHeader = "vpp_stage,name,step,min,max,norm,mean,nans,zeros,shape,dtype\n";

std::string row(const std::string& name, int step, double norm) {
    return "0," + name + "," + std::to_string(step) + ",-0.1,0.2," + std::to_string(norm) +
           ",0.001,0,0.0,\"[16, 8]\",torch.float32\n";
}

class LiveFollow : public ::testing::TestWithParam<std::string> {
protected:
    std::vector<std::string> ingest_args(const std::string& job, const std::string& db) {
        std::vector<std::string> a = {program("msmon"), "ingest", job, "--follow", "--db", db, "--json"};
        if (GetParam() == "polling") {
            a.push_back("--poll-ms");
            a.push_back("100");
        }
        return a;
    }
    // The CSV text of `msmon query` for one rank/kind/step/op.
    std::string query(const std::string& db, int rank, const std::string& kind, int step) {
        return run({program("msmon"), "query", "--db", db, "--rank", std::to_string(rank), "--kind", kind, "--steps",
                    std::to_string(step), "--op", "norm"})
            .out;
    }
    bool visible(const std::string& db, int rank, const std::string& kind, int step, const std::string& norm) {
        return query(db, rank, kind, step).find(",norm," + norm + "\n") != std::string::npos;
    }
};

TEST_P(LiveFollow, appended_rows_half_lines_new_ranks_and_new_files_are_queryable_within_a_second) {
    TempDir tmp;
    const std::string job = tmp.path() + "/job";
    const std::string rank0 = job + "/monitor_output/Nov22_13-55-47-rank0-426b92d1";
    std::filesystem::create_directories(rank0);
    write_file(rank0 + "/grad_reduced_0-4.csv", kHeader + row("embed.weight", 0, 1.5));
    const std::string db = tmp / "store.db";
    Background ingest(ingest_args(job, db), tmp.path(), {{"XDG_STATE_HOME", tmp / "state"}});

    using std::chrono::milliseconds;
    const milliseconds second(1000);
    ASSERT_GE(wait_until([&] { return visible(db, 0, "grad_reduced", 0, "1.5"); }, milliseconds(5000)).count(), 0)
        << "initial row never arrived; stderr: " << ingest.err();

    // 1. A row appended to an existing file.
    append_file(rank0 + "/grad_reduced_0-4.csv", row("embed.weight", 1, 2.25));
    auto t = wait_until([&] { return visible(db, 0, "grad_reduced", 1, "2.25"); }, second);
    EXPECT_GE(t.count(), 0) << "appended row not visible within 1 s";
    std::printf("[ visible  ] %s: appended row after %lld ms\n", GetParam().c_str(), static_cast<long long>(t.count()));

    // 2. A line written in two halves: nothing until the newline, then the whole value.
    const std::string line = row("embed.weight", 2, 3.125);
    append_file(rank0 + "/grad_reduced_0-4.csv", line.substr(0, 20));
    // A whole row in another file, written after the half line: once it is stored, msmon has read past the half line.
    write_file(rank0 + "/param_origin_0-4.csv", kHeader + row("embed.weight", 2, 0.5));
    ASSERT_GE(wait_until([&] { return visible(db, 0, "param_origin", 2, "0.5"); }, milliseconds(5000)).count(), 0)
        << "a row written after the half line never arrived; stderr: " << ingest.err();
    EXPECT_EQ(query(db, 0, "grad_reduced", 2).find("embed.weight"), std::string::npos) << "a half line was stored";
    append_file(rank0 + "/grad_reduced_0-4.csv", line.substr(20));
    t = wait_until([&] { return visible(db, 0, "grad_reduced", 2, "3.125"); }, second);
    EXPECT_GE(t.count(), 0) << "completed line not visible within 1 s";
    std::printf("[ visible  ] %s: completed half line after %lld ms\n", GetParam().c_str(),
                static_cast<long long>(t.count()));

    // 3. A new rank folder appears with a file in it.
    const std::string rank1 = job + "/monitor_output/Nov22_13-55-48-rank1-9f8e7d6c";
    std::filesystem::create_directories(rank1);
    write_file(rank1 + "/grad_reduced_0-4.csv", kHeader + row("embed.weight", 0, 4.5));
    t = wait_until([&] { return visible(db, 1, "grad_reduced", 0, "4.5"); }, second);
    EXPECT_GE(t.count(), 0) << "new rank folder not picked up within 1 s";
    std::printf("[ visible  ] %s: new rank folder after %lld ms\n", GetParam().c_str(),
                static_cast<long long>(t.count()));

    // 4. A new step file (next step range, another prefix).
    write_file(rank0 + "/grad_reduced_5-9.csv", kHeader + row("embed.weight", 5, 5.75));
    write_file(rank0 + "/exp_avg_5-9.csv", kHeader + row("embed.weight", 5, 0.0625));
    t = wait_until([&] { return visible(db, 0, "grad_reduced", 5, "5.75") && visible(db, 0, "exp_avg", 5, "0.0625"); },
                   second);
    EXPECT_GE(t.count(), 0) << "new step files not picked up within 1 s";
    std::printf("[ visible  ] %s: new step files after %lld ms\n", GetParam().c_str(),
                static_cast<long long>(t.count()));

    ingest.signal(SIGINT);
    EXPECT_EQ(ingest.wait(milliseconds(5000)), 0) << ingest.err();
    EXPECT_NE(ingest.out().find("\"errors\": 0"), std::string::npos) << "the half line was counted as malformed:\n"
                                                                     << ingest.out();
    EXPECT_NE(ingest.out().find(GetParam() == "polling" ? "\"watch\": \"polling\"" : "\"watch\": \"inotify\""),
              std::string::npos)
        << ingest.out();
}

TEST_P(LiveFollow, sigterm_ends_follow_with_exit_zero_and_everything_committed) {
    TempDir tmp;
    const std::string job = tmp.path() + "/job";
    const std::string rank0 = job + "/monitor_output/Nov22_13-55-47-rank0-426b92d1";
    std::filesystem::create_directories(rank0);
    std::string body = kHeader;
    for (int s = 0; s < 50; ++s) body += row("w", s, s + 0.5);
    write_file(rank0 + "/param_origin_0-49.csv", body);
    const std::string db = tmp / "store.db";
    Background ingest(ingest_args(job, db), tmp.path(), {{"XDG_STATE_HOME", tmp / "state"}});
    ASSERT_GE(
        wait_until([&] { return visible(db, 0, "param_origin", 49, "49.5"); }, std::chrono::milliseconds(5000)).count(),
        0);
    ingest.signal(SIGTERM);
    EXPECT_EQ(ingest.wait(std::chrono::milliseconds(5000)), 0);
    EXPECT_NE(ingest.out().find("\"rows\": 50"), std::string::npos) << ingest.out();
}

// The progress line `msmon ingest --follow` prints once a second counts ranks, read from the
// writer's thread while the reading thread adds runs. It used to read the reading thread's run table unguarded (a
// data race ThreadSanitizer reports; CI runs this suite under it) and to count runs as ranks: a rank whose job
// restarted (a second run folder) was two.
TEST_P(LiveFollow, the_progress_line_counts_ranks_while_runs_arrive) {
    TempDir tmp;
    const std::string job = tmp.path() + "/job";
    const std::string runs[] = {job + "/monitor_output/Nov22_13-55-47-rank0-426b92d1",
                                job + "/monitor_output/Nov22_13-55-47-rank1-9f8e7d6c",
                                job + "/monitor_output/Nov22_14-02-10-rank0-5a5a5a5a"};  // rank 0 after a restart
    std::filesystem::create_directories(runs[0]);
    write_file(runs[0] + "/grad_reduced_0-99.csv", kHeader + row("w", 0, 1.5));
    const std::string db = tmp / "store.db";
    std::vector<std::string> args = ingest_args(job, db);
    std::erase(args, std::string("--json"));  // the progress lines instead
    Background ingest(args, tmp.path(), {{"XDG_STATE_HOME", tmp / "state"}});
    // Rows arrive every 100 ms for 3.5 s; the second and third run folders appear on the way.
    for (int step = 1; step <= 35; ++step) {
        if (step == 5) std::filesystem::create_directories(runs[1]);
        if (step == 15) std::filesystem::create_directories(runs[2]);
        for (int r = 0; r < 3; ++r)
            if (std::filesystem::exists(runs[r])) {
                const std::string file = runs[r] + "/grad_reduced_0-99.csv";
                if (!std::filesystem::exists(file)) write_file(file, kHeader);
                append_file(file, row("w", step, step + 0.5));
            }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // paces the input: a step every 100 ms
    }
    ASSERT_GE(
        wait_until([&] { return visible(db, 0, "grad_reduced", 35, "35.5"); }, std::chrono::milliseconds(5000)).count(),
        0)
        << ingest.err();
    ingest.signal(SIGINT);
    EXPECT_EQ(ingest.wait(std::chrono::milliseconds(5000)), 0) << ingest.err();
    const std::string out = ingest.out();
    // The last progress line, after every run folder had rows.
    const auto last = out.rfind("\n[", out.size() >= 2 ? out.size() - 2 : 0);
    ASSERT_NE(out.find(" ranks, "), std::string::npos) << "no progress line:\n" << out;
    const std::string line = out.substr(last == std::string::npos ? 0 : last + 1);
    EXPECT_NE(line.find(" 2 ranks, "), std::string::npos) << "three runs of two ranks:\n" << out;
    EXPECT_EQ(out.find(" 3 ranks, "), std::string::npos) << out;
}

INSTANTIATE_TEST_SUITE_P(Watch, LiveFollow, ::testing::Values("inotify", "polling"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace msmon::test
