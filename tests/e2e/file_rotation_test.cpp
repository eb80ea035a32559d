// Files that change under `msmon ingest --follow` other than by appending: truncated and rewritten, rewritten
// in place, replaced by a rename, deleted and re-created. Values read before stay, new rows arrive, and none
// of it is a malformed line — with inotify and with polling.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

const std::string kHeader = "vpp_stage,name,step,norm,min,max,shape,dtype\n";

std::string row(int step, const std::string& norm) {
    return "0,embed.weight," + std::to_string(step) + "," + norm + ",-0.5,0.5,\"[16, 8]\",torch.float32\n";
}

class FileRotation : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        env_ = isolated_env(tmp_);
        job_ = tmp_ / "job";
        run_dir_ = job_ + "/monitor_output/Nov22_13-55-47-rank0-426b92d1";
        fs::create_directories(run_dir_);
        db_ = tmp_ / "store.db";
    }
    void start() {
        std::vector<std::string> argv = {program("msmon"), "ingest", job_, "--follow", "--db", db_, "--json"};
        if (GetParam() == "polling") argv.insert(argv.end(), {"--poll-ms", "100"});
        ingest_ = std::make_unique<Background>(argv, tmp_.path(), env_);
    }
    // norm at `step`, or "" if absent (or ambiguous).
    std::string norm(int step) {
        std::string error;
        auto rows = query_rows(db_, {"--op", "norm", "--steps", std::to_string(step)}, env_, error);
        return rows.size() == 1 ? rows[0].value : std::string();
    }
    bool wait_norm(int step, const std::string& value) {
        return wait_until([&] { return norm(step) == value; }, milliseconds(2000)).count() >= 0;
    }
    // Stops the follower; returns its --json summary.
    std::string stop() {
        ingest_->signal(SIGINT);
        EXPECT_EQ(ingest_->wait(milliseconds(5000)), 0) << ingest_->err();
        return ingest_->out();
    }

    TempDir tmp_;
    std::map<std::string, std::string> env_;
    std::string job_, run_dir_, db_;
    std::unique_ptr<Background> ingest_;
};

TEST_P(FileRotation, truncated_file_rewritten_with_new_rows_keeps_old_values_and_reads_the_new_ones) {
    const std::string path = run_dir_ + "/grad_reduced_0-9.csv";
    write_file(path, kHeader + row(0, "1.5") + row(1, "2.5") + row(2, "3.5"));
    start();
    ASSERT_TRUE(wait_norm(2, "3.5")) << ingest_->err();

    // Truncated to nothing, then (once msmon has seen it empty, and said so) a shorter new content.
    ASSERT_EQ(::truncate(path.c_str(), 0), 0);
    ASSERT_GE(wait_until([&] { return ingest_->err().find("truncated (size 0 < offset") != std::string::npos; },
                         milliseconds(2000))
                  .count(),
              0)
        << "msmon did not see the file empty; stderr: " << ingest_->err();
    append_file(path, kHeader + row(3, "4.5"));
    EXPECT_TRUE(wait_norm(3, "4.5")) << "row written after truncation not read";

    // Truncated and rewritten at once, longer than before.
    write_file(path, kHeader + row(4, "5.5") + row(5, "6.5") + row(6, "7.5") + row(7, "8.5"));
    EXPECT_TRUE(wait_norm(7, "8.5")) << "rows of the rewritten file not read";
    EXPECT_EQ(norm(4), "5.5");

    for (const auto& [step, value] :
         std::vector<std::pair<int, std::string>>{{0, "1.5"}, {1, "2.5"}, {2, "3.5"}, {3, "4.5"}})
        EXPECT_EQ(norm(step), value) << "value read before the truncation was lost (step " << step << ")";
    EXPECT_EQ(json_count(stop(), "errors"), 0);
}

TEST_P(FileRotation, file_rewritten_in_place_with_equal_length_is_read_again) {
    const std::string path = run_dir_ + "/grad_reduced_0-9.csv";
    const std::string old_text = kHeader + row(0, "1.5") + row(1, "2.5");
    const std::string new_text = kHeader + row(2, "3.5") + row(3, "4.5");
    ASSERT_EQ(old_text.size(), new_text.size());
    write_file(path, old_text);
    start();
    ASSERT_TRUE(wait_norm(1, "2.5")) << ingest_->err();
    std::this_thread::sleep_for(milliseconds(20));  // paces the input: a distinct mtime for the poller
    // Overwrite the bytes without truncating: same inode, same size, different first bytes.
    std::FILE* f = std::fopen(path.c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    std::fwrite(new_text.data(), 1, new_text.size(), f);
    std::fclose(f);
    EXPECT_TRUE(wait_norm(3, "4.5")) << "in-place rewrite not recognised";
    EXPECT_EQ(norm(2), "3.5");
    EXPECT_EQ(norm(0), "1.5");
    EXPECT_EQ(norm(1), "2.5");
    EXPECT_EQ(json_count(stop(), "errors"), 0);
}

TEST_P(FileRotation, file_replaced_by_rename_of_another_file_is_read_from_its_start) {
    const std::string path = run_dir_ + "/grad_reduced_0-9.csv";
    write_file(path, kHeader + row(0, "1.5") + row(1, "2.5") + row(2, "3.5"));
    start();
    ASSERT_TRUE(wait_norm(2, "3.5")) << ingest_->err();

    // A different file (longer, so no size shortcut) renamed over it.
    const std::string staged = tmp_ / "staged.csv";
    write_file(staged, kHeader + row(5, "6.5") + row(6, "7.5") + row(7, "8.5") + row(8, "9.5"));
    fs::rename(staged, path);
    EXPECT_TRUE(wait_norm(8, "9.5")) << "replacement file not read";
    EXPECT_EQ(norm(5), "6.5") << "replacement file not read from its start";
    EXPECT_EQ(norm(0), "1.5");
    EXPECT_EQ(norm(2), "3.5");
    // And the replacement is followed.
    append_file(path, row(9, "10.5"));
    EXPECT_TRUE(wait_norm(9, "10.5")) << "row appended to the replacement not read";
    EXPECT_EQ(json_count(stop(), "errors"), 0);
}

TEST_P(FileRotation, deleted_file_keeps_its_values_and_a_recreated_one_is_read_from_the_start) {
    const std::string path = run_dir_ + "/grad_reduced_0-9.csv";
    const std::string other = run_dir_ + "/grad_reduced_10-19.csv";
    write_file(path, kHeader + row(0, "1.5") + row(1, "2.5"));
    start();
    ASSERT_TRUE(wait_norm(1, "2.5")) << ingest_->err();

    fs::remove(path);
    // Following continues: a new file elsewhere still arrives, and the deleted file's values stay.
    write_file(other, kHeader + row(10, "11.5"));
    EXPECT_TRUE(wait_norm(10, "11.5")) << "follow stopped after a deletion";
    EXPECT_EQ(norm(0), "1.5");
    EXPECT_EQ(norm(1), "2.5");

    // msprobe re-creates a deleted range file with a new header.
    write_file(path, kHeader + row(2, "3.5"));
    EXPECT_TRUE(wait_norm(2, "3.5")) << "re-created file not read";
    EXPECT_EQ(norm(0), "1.5");
    EXPECT_EQ(json_count(stop(), "errors"), 0);
}

INSTANTIATE_TEST_SUITE_P(Watch, FileRotation, ::testing::Values("inotify", "polling"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace msmon::test
