// forkpty: the child's stdin/stdout/stderr are the slave side; the parent reads the master until the child is gone.
#include "tests/support/pty_run.hpp"

#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>

namespace msmon::test {

CommandResult run_on_terminal(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
    CommandResult r;
    int master = -1;
    const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
    if (pid < 0) return r;
    if (pid == 0) {
        for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execv(args[0], args.data());
        _exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    char buf[65536];
    for (;;) {
        pollfd p{master, POLLIN, 0};
        const int n = poll(&p, 1, 100);
        if (n > 0) {
            const ssize_t got = read(master, buf, sizeof buf);
            if (got > 0) {
                r.out.append(buf, static_cast<std::size_t>(got));
                continue;
            }
            if (got < 0 && errno == EINTR) continue;
            break;  // EIO: the child and everything it started closed the terminal
        }
        if (std::chrono::steady_clock::now() > deadline) {
            kill(pid, SIGKILL);
            break;
        }
    }
    close(master);
    int status = 0;
    waitpid(pid, &status, 0);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

}  // namespace msmon::test
