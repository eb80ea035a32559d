// One command at a time through posix_spawn: its own process group, and every process it starts followed
// (core/notify/process_tree: a setsid() child leaves the group), so that a timeout kills all it started; default
// signal handling, no descriptor of ours but its stdin, stdout and stderr.
#include "core/notify/hook_runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "core/notify/process_tree.hpp"
#include "core/text/counted.hpp"
#include "core/text/display_escape.hpp"

extern char** environ;

namespace msmon {

namespace {

constexpr std::size_t kOutputTail = 400;  // bytes of a failed command's output kept for the log
constexpr auto kKillGrace = std::chrono::seconds(1);
constexpr auto kStopKillGrace = std::chrono::milliseconds(500);  // msmon is stopping: within 2 s of the signal

std::vector<std::string> environment_with(const EnvVars& a, const EnvVars& b) {
    std::map<std::string, std::string> vars;
    for (char** e = environ; e && *e; ++e) {
        const char* eq = std::strchr(*e, '=');
        if (eq) vars[std::string(*e, static_cast<std::size_t>(eq - *e))] = eq + 1;
    }
    for (const auto* set : {&a, &b})
        for (const auto& [k, v] : *set) vars[k] = v;
    std::vector<std::string> out;
    out.reserve(vars.size());
    for (const auto& [k, v] : vars) out.push_back(k + "=" + v);
    return out;
}

std::string describe_status(int status) {
    if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return std::string("died of signal ") + std::to_string(WTERMSIG(status));
    return "ended oddly";
}

}  // namespace

HookRunner::HookRunner(HookOptions options, std::function<void(const std::string&)> notice)
    : options_(std::move(options)), notice_(std::move(notice)) {
    // spdlog builds its default logger on first use; built here, before the runner thread can log, so that the two
    // threads never race to build it (TSan saw that race in a process that had not set logging up).
    spdlog::default_logger_raw();
    thread_ = std::thread([this] { loop(); });
}

HookRunner::~HookRunner() {
    finish(std::chrono::milliseconds(0));
}

bool HookRunner::submit(HookEvent event) {
    {
        std::lock_guard lock(mu_);
        if (!stopping_ && queue_.size() < options_.max_pending) {
            queue_.push_back(std::move(event));
            cv_.notify_all();
            return true;
        }
    }
    counters_.dropped.fetch_add(1);
    const std::string msg = "--on-incident: " + std::to_string(options_.max_pending) +
                            " runs already wait; this incident's run is dropped (see the store for every incident)";
    spdlog::warn("{}", msg);
    if (notice_) notice_(msg);
    return false;
}

void HookRunner::finish(std::chrono::milliseconds limit) {
    std::size_t dropped = 0;
    {
        std::unique_lock lock(mu_);
        if (!stopping_) cv_.wait_for(lock, limit, [&] { return queue_.empty() && !running_; });
        stopping_ = true;
        abort_.store(true);
        dropped = queue_.size();
        queue_.clear();
        cv_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
    if (dropped > 0) {
        counters_.dropped.fetch_add(dropped);
        const std::string msg = "--on-incident: " + counted(dropped, "run") + (dropped == 1 ? " was" : " were") +
                                " still waiting at exit and not run";
        spdlog::warn("{}", msg);
        if (notice_) notice_(msg);
    }
}

void HookRunner::loop() {
    // A command that exits before reading its stdin must not kill msmon with SIGPIPE: blocked on this thread,
    // the write fails with EPIPE instead.
    sigset_t pipe_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, nullptr);
    while (true) {
        HookEvent event;
        {
            std::unique_lock lock(mu_);
            cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
            if (queue_.empty()) return;  // stopping, nothing left
            event = std::move(queue_.front());
            queue_.pop_front();
            running_ = true;
        }
        run_one(event);
        std::lock_guard lock(mu_);
        running_ = false;
        cv_.notify_all();
    }
}

void HookRunner::run_one(const HookEvent& event) {
    using Clock = std::chrono::steady_clock;
    auto fail = [&](const std::string& what) {
        counters_.failed.fetch_add(1);
        const std::string msg = "--on-incident command " + what;
        spdlog::warn("{}", msg);
        if (notice_) notice_(escape_for_terminal(msg));
    };
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0) return fail(std::string("could not start: ") + std::strerror(errno));
    if (::pipe2(out, O_CLOEXEC) != 0) {
        ::close(in[0]);
        ::close(in[1]);
        return fail(std::string("could not start: ") + std::strerror(errno));
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, out[1], 2);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    const std::vector<std::string> env = environment_with(options_.env, event.env);
    std::vector<char*> envp;
    for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    const char* argv[] = {"/bin/sh", "-c", options_.command.c_str(), nullptr};
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, "/bin/sh", &actions, &attr, const_cast<char**>(argv), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(in[0]);
    ::close(out[1]);
    if (rc != 0) {
        ::close(in[1]);
        ::close(out[0]);
        return fail(std::string("could not start /bin/sh: ") + std::strerror(rc));
    }
    ::fcntl(in[1], F_SETFL, O_NONBLOCK);
    ::fcntl(out[0], F_SETFL, O_NONBLOCK);

    const auto deadline = Clock::now() + options_.timeout;
    std::size_t written = 0;
    int in_fd = in[1], out_fd = out[0];
    if (event.input.empty()) {
        ::close(in_fd);
        in_fd = -1;
    }
    std::string output;
    int status = 0;
    bool exited = false, killed = false;
    Clock::time_point term_sent{};
    ProcessTree started(pid);  // what it started, setsid() children included
    while (!exited) {
        started.refresh();
        // Reap first: a command that left a background child holding its output open has still ended.
        const pid_t w = ::waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            exited = true;
            break;
        }
        const auto now = Clock::now();
        if (!killed && (now >= deadline || abort_.load())) {
            started.signal_all(SIGTERM);
            killed = true;
            term_sent = now;
        } else if (killed && now >= term_sent + (abort_.load() ? kStopKillGrace : kKillGrace)) {
            started.signal_all(SIGKILL);
        }
        pollfd fds[2];
        nfds_t n = 0;
        if (out_fd >= 0) fds[n++] = {out_fd, POLLIN, 0};
        if (in_fd >= 0) fds[n++] = {in_fd, POLLOUT, 0};
        ::poll(fds, n, 50);
        for (nfds_t i = 0; i < n; ++i) {
            if (fds[i].fd == out_fd && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                char buf[4096];
                const ssize_t got = ::read(out_fd, buf, sizeof buf);
                if (got > 0) {
                    output.append(buf, static_cast<std::size_t>(got));
                    if (output.size() > 4 * kOutputTail) output.erase(0, output.size() - kOutputTail);
                } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
                    ::close(out_fd);
                    out_fd = -1;
                }
            }
            if (fds[i].fd == in_fd && (fds[i].revents & (POLLOUT | POLLHUP | POLLERR))) {
                const ssize_t put = ::write(in_fd, event.input.data() + written, event.input.size() - written);
                if (put > 0) written += static_cast<std::size_t>(put);
                if ((put < 0 && errno != EAGAIN && errno != EINTR) || written == event.input.size()) {
                    ::close(in_fd);  // done, or the command closed its stdin (EPIPE): it reads no more
                    in_fd = -1;
                }
            }
        }
    }
    if (in_fd >= 0) ::close(in_fd);
    if (out_fd >= 0) {
        // What it wrote just before it exited (a background child may still hold the pipe: no waiting for EOF).
        char buf[4096];
        for (ssize_t got; (got = ::read(out_fd, buf, sizeof buf)) > 0;) {
            output.append(buf, static_cast<std::size_t>(got));
            if (output.size() > 4 * kOutputTail) output.erase(0, output.size() - kOutputTail);
        }
        ::close(out_fd);
    }
    // A pending SIGPIPE from a write to a command that had exited: consume it (it is blocked on this thread).
    sigset_t pipe_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    timespec zero{0, 0};
    while (::sigtimedwait(&pipe_set, nullptr, &zero) == SIGPIPE) {
    }
    if (killed) {  // whatever the command started and left behind, in its group or out of it
        started.refresh();
        started.signal_all(SIGKILL);
    }
    if (output.size() > kOutputTail) output.erase(0, output.size() - kOutputTail);
    const std::string tail = output.empty() ? "" : " (its output ended: " + output + ")";
    if (killed && abort_.load() && Clock::now() < deadline) return fail("was ended: msmon was stopping" + tail);
    if (killed) {
        counters_.timed_out.fetch_add(1);
        return fail("ran past its timeout of " + std::to_string(options_.timeout.count()) + " ms and was killed" +
                    tail);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return fail(describe_status(status) + tail);
    counters_.ran.fetch_add(1);
    spdlog::info("--on-incident command ran ({} bytes on its stdin)", event.input.size());
}

}  // namespace msmon
