// Test helpers: temporary folders, running the real programs, reading files, locating ../shared.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace msmon::test {

// A fresh folder under $TMPDIR, removed with everything in it when the object dies.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

private:
    std::string path_;
};

struct CommandResult {
    int exit_code = -1;  // -1: killed by a signal
    std::string out;
    std::string err;
};

// Path of a program built by this project (msmon, msmon-tui).
std::string program(const std::string& name);

// Runs a program to completion with extra environment variables; captures stdout and stderr.
CommandResult run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {});

// A program running in the background; stdout/stderr go to files in `log_dir`.
class Background {
public:
    Background(const std::vector<std::string>& argv, const std::string& log_dir,
               const std::map<std::string, std::string>& env = {});
    ~Background();  // SIGKILL if still running; a test failure if it had died of a signal nobody sent it
    pid_t pid() const { return pid_; }
    void signal(int sig);
    // Waits for exit; returns the exit code, or -signal when killed by one; -1000 on timeout.
    int wait(std::chrono::milliseconds timeout);
    std::string out() const;
    std::string err() const;

private:
    pid_t pid_ = -1;
    std::string name_, out_path_, err_path_;
    bool reaped_ = false;
    int sent_ = 0;  // the last signal sent through signal()
};

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& data);
void append_file(const std::string& path, const std::string& data);

// ../shared beside the project, or empty if absent (tests that need it say so through MSMON_SKIP_UNLESS_REQUIRED).
std::string shared_dir();

// True when MSMON_TEST_REQUIRE_ALL=1: this run is meant to have everything every test needs (CI).
bool require_all();

// Polls `ok` every 20 ms until it returns true or `timeout` passes; returns the time it took, or -1 ms.
std::chrono::milliseconds wait_until(const std::function<bool()>& ok, std::chrono::milliseconds timeout);

// All files under `dir` whose names end with `suffix`, sorted.
std::vector<std::string> find_files(const std::string& dir, const std::string& suffix);

}  // namespace msmon::test

// Where a test cannot run because something it needs is missing; `what` names it and how to get it. Skips with
// `what`, or, when MSMON_TEST_REQUIRE_ALL=1, fails with it, so that a run meant to be complete cannot count a skip
// as a pass. Returns from the enclosing void function (a TEST body, SetUp, a helper a test calls last). The failure
// is fatal: in SetUp, as with a skip, the test body does not run.
#define MSMON_SKIP_UNLESS_REQUIRED(what)                                                               \
    do {                                                                                               \
        if (::msmon::test::require_all())                                                              \
            GTEST_FAIL() << "required in this run (MSMON_TEST_REQUIRE_ALL=1) but missing: " << (what); \
        GTEST_SKIP() << (what);                                                                        \
    } while (0)
