// msmon never writes into what it monitors: every command and the TUI run over a job folder (msprobe output,
// MindFormers logs, health file) and the folder is unchanged afterwards — same entries, sizes, modes, mtimes and
// bytes; no file added. Its store, log and exports live elsewhere.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <map>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

namespace fs = std::filesystem;

std::map<std::string, std::string> tree_state(const std::string& root) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
        struct stat st {};
        ::lstat(e.path().c_str(), &st);
        std::string state = std::to_string(st.st_mode) + " " + std::to_string(st.st_size) + " " +
                            std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
        if (S_ISREG(st.st_mode)) state += " " + std::to_string(std::hash<std::string>{}(read_file(e.path())));
        out[e.path().string()] = state;
    }
    return out;
}

TEST(ReadOnly, no_command_and_not_the_tui_changes_anything_in_the_job_folder) {
    TempDir tmp;
    const std::string job = tmp / "job";
    ASSERT_EQ(run({program("msmon"), "simulate", job, "--ranks", "2", "--steps", "12", "--logs", "--health", "--faults",
                   "nan@5:r1"})
                  .exit_code,
              0);
    const auto before = tree_state(job);
    ASSERT_GT(before.size(), 20u);
    const std::map<std::string, std::string> env = {{"XDG_STATE_HOME", tmp / "state"},
                                                    {"XDG_CACHE_HOME", tmp / "cache"}};
    for (const std::vector<std::string>& args : {std::vector<std::string>{"ingest", job},
                                                 {"query", job, "--op", "norm"},
                                                 {"anomalies", job},
                                                 {"health", job},
                                                 {"export", job, "--trend-db", tmp / "export"},
                                                 {"ingest", job, "--db", tmp / "other.db"}}) {
        std::vector<std::string> argv = {program("msmon")};
        argv.insert(argv.end(), args.begin(), args.end());
        auto r = run(argv, env);
        EXPECT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
    }
    for (const char* view : {"overview", "chart", "anomalies", "health", "config"})
        EXPECT_EQ(run({program("msmon-tui"), job, "--snapshot", view}, env).exit_code, 0) << view;
    if (TmuxSession::available()) {
        TmuxSession t(
            program("msmon-tui") + " " + job, 120, 40,
            {{"XDG_STATE_HOME", tmp / "state"}, {"XDG_CACHE_HOME", tmp / "cache"}, {"TERM", "xterm-256color"}});
        EXPECT_FALSE(t.wait_for("Overview", std::chrono::milliseconds(8000)).empty());
        for (const char* key : {"2", "3", "4", "5", "1"}) {
            t.send_keys(key, true);
            EXPECT_TRUE(t.settle()) << "key " << key << ": " << t.last_wait_error();
        }
        t.send_keys("q", true);
        EXPECT_TRUE(t.wait_exit()) << "msmon-tui did not quit on q";
    }
    const auto after = tree_state(job);
    EXPECT_EQ(after.size(), before.size()) << "entries were added to or removed from the job folder";
    for (const auto& [path, state] : before) {
        const auto it = after.find(path);
        ASSERT_NE(it, after.end()) << path << " disappeared";
        EXPECT_EQ(it->second, state) << path << " changed";
    }
    for (const auto& [path, state] : after) EXPECT_TRUE(before.count(path)) << path << " was created";
}

// Another user reads a store once its writer has exited: the store is in WAL mode and its -shm went with the
// writer; a reader that may not create one got "attempt to write a readonly database" from query and the TUI.
// With no writer running it is read as immutable; with one running, through the writer's -shm.
TEST(ReadOnly, another_user_reads_a_store_whose_writer_has_exited_and_one_whose_writer_runs) {
    if (::geteuid() != 0) MSMON_SKIP_UNLESS_REQUIRED("needs root (another user)");
    TempDir tmp;
    ASSERT_EQ(::chmod(tmp.path().c_str(), 0755), 0);
    const std::string job = tmp / "job", db = tmp / "store.db";
    ASSERT_EQ(run({program("msmon"), "simulate", job, "--ranks", "2", "--steps", "5"}).exit_code, 0);
    const std::map<std::string, std::string> env = {{"XDG_STATE_HOME", tmp / "state"},
                                                    {"XDG_CACHE_HOME", tmp / "cache"}};
    ASSERT_EQ(run({program("msmon"), "ingest", job, "--db", db}, env).exit_code, 0);
    ASSERT_FALSE(fs::exists(db + "-shm"));
    auto as_nobody = [&](std::vector<std::string> args) {
        std::vector<std::string> argv = {"/usr/bin/setpriv",
                                         "--reuid=65534",
                                         "--regid=65534",
                                         "--clear-groups",
                                         "/usr/bin/env",
                                         "HOME=/nonexistent",
                                         "XDG_STATE_HOME=/tmp/msmon-nobody-state"};
        argv.insert(argv.end(), args.begin(), args.end());
        return run(argv);
    };
    auto q = as_nobody({program("msmon"), "query", "--db", db, "--steps", "0"});
    EXPECT_EQ(q.exit_code, 0) << q.err;
    EXPECT_NE(q.out.find("grad_reduced"), std::string::npos);
    auto snap = as_nobody({program("msmon-tui"), "--db", db, "--snapshot", "overview", "--size", "100x20"});
    EXPECT_EQ(snap.exit_code, 0) << snap.err;
    EXPECT_NE(snap.out.find("2 ranks"), std::string::npos) << snap.out;
    EXPECT_FALSE(fs::exists(db + "-shm")) << "the reader created files in the store's folder";
    // A writer running: its -shm is there to read through.
    Background follow({program("msmon"), "ingest", job, "--follow", "--db", db}, tmp.path(), env);
    ASSERT_GE(wait_until([&] { return fs::exists(db + "-shm"); }, std::chrono::milliseconds(5000)).count(), 0);
    auto q2 = as_nobody({program("msmon"), "query", "--db", db, "--steps", "0"});
    EXPECT_EQ(q2.exit_code, 0) << q2.err;
    EXPECT_EQ(q2.out, q.out);
    follow.signal(SIGTERM);
    EXPECT_EQ(follow.wait(std::chrono::milliseconds(5000)), 0);
}

}  // namespace
}  // namespace msmon::test
