// Test helpers: fork/exec for the real programs, with output captured through files.
#include "tests/support/test_env.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace msmon::test {

namespace fs = std::filesystem;

TempDir::TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/msmon-test-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!::mkdtemp(buf.data())) std::abort();
    path_ = buf.data();
}

TempDir::~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
}

std::string program(const std::string& name) {
    return std::string(MSMON_BIN_DIR) + "/" + name;
}

namespace {

pid_t spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
            const std::string& out_path, const std::string& err_path) {
    pid_t pid = ::fork();
    if (pid == 0) {
        ::setpgid(0, 0);
        int in = ::open("/dev/null", O_RDONLY);
        int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(in, 0);
        ::dup2(out, 1);
        ::dup2(err, 2);
        for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        ::execv(args[0], args.data());
        ::_exit(127);
    }
    return pid;
}

int decode_status(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return -WTERMSIG(status);
    return -1;
}

}  // namespace

CommandResult run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
    TempDir io;
    const std::string out = io / "out", err = io / "err";
    pid_t pid = spawn(argv, env, out, err);
    int status = 0;
    ::waitpid(pid, &status, 0);
    CommandResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_file(out);
    r.err = read_file(err);
    return r;
}

Background::Background(const std::vector<std::string>& argv, const std::string& log_dir,
                       const std::map<std::string, std::string>& env) {
    static int counter = 0;
    const std::string tag = std::to_string(::getpid()) + "-" + std::to_string(counter++);
    out_path_ = log_dir + "/bg-" + tag + ".out";
    err_path_ = log_dir + "/bg-" + tag + ".err";
    name_ = argv.empty() ? std::string() : argv[0];
    pid_ = spawn(argv, env, out_path_, err_path_);
}

Background::~Background() {
    if (!reaped_ && pid_ > 0) {
        int status = 0;
        // A program that crashed while nobody waited for it (a sanitizer report aborts it) must not pass unseen.
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            if (WIFSIGNALED(status) && WTERMSIG(status) != sent_)
                ADD_FAILURE() << name_ << " died of signal " << WTERMSIG(status)
                              << " before the test ended; its stderr:\n"
                              << err();
            return;
        }
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
    }
}

void Background::signal(int sig) {
    if (reaped_) return;
    sent_ = sig;
    ::kill(pid_, sig);
}

int Background::wait(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        int status = 0;
        pid_t r = ::waitpid(pid_, &status, WNOHANG);
        if (r == pid_) {
            reaped_ = true;
            return decode_status(status);
        }
        if (std::chrono::steady_clock::now() > deadline) return -1000;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));  // paces the poll of waitpid
    }
}

std::string Background::out() const {
    return read_file(out_path_);
}
std::string Background::err() const {
    return read_file(err_path_);
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write_file(const std::string& path, const std::string& data) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << data;
}

void append_file(const std::string& path, const std::string& data) {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << data;
}

std::string shared_dir() {
    const std::string dir = std::string(MSMON_SOURCE_DIR) + "/../shared";
    std::error_code ec;
    if (fs::is_directory(dir + "/fixtures", ec)) return fs::canonical(dir).string();
    return {};
}

bool require_all() {
    const char* v = std::getenv("MSMON_TEST_REQUIRE_ALL");
    return v && std::string(v) == "1";
}

std::chrono::milliseconds wait_until(const std::function<bool()>& ok, std::chrono::milliseconds timeout) {
    const auto start = std::chrono::steady_clock::now();
    while (true) {
        if (ok())
            return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
        if (std::chrono::steady_clock::now() - start > timeout) return std::chrono::milliseconds(-1);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // paces the poll of `ok`
    }
}

std::vector<std::string> find_files(const std::string& dir, const std::string& suffix) {
    std::vector<std::string> out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator(); ++it) {
        const std::string p = it->path().string();
        if (it->is_regular_file() && p.size() >= suffix.size() &&
            p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0)
            out.push_back(p);
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace msmon::test
