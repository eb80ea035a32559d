// Runs the user's command for each event (`--on-incident CMD`), one at a time, on its own thread, so that a slow
// or hanging command never holds up ingest. The command is the user's own text, run by `/bin/sh -c` as git hooks
// and cron lines are; what the event says reaches it only on its stdin and in fixed MSMON_* variables, never in
// its command line. Each run has a timeout: past it the command's whole process group gets SIGTERM, then
// SIGKILL a second later. A failing or killed run is logged with its status and the end of its output, and not
// run again. Events that arrive while `max_pending` wait are dropped, and counted and logged.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace msmon {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

struct HookOptions {
    std::string command;  // run as /bin/sh -c COMMAND
    std::chrono::milliseconds timeout{20000};
    std::size_t max_pending = 64;
    EnvVars env;  // set for every run (MSMON_JOB, MSMON_STORE, ...), over the inherited environment
};

struct HookEvent {
    std::string input;  // written to the command's stdin, which is then closed
    EnvVars env;        // set for this run only (numbers: MSMON_STEP, MSMON_RANK)
};

struct HookCounters {
    std::atomic<std::uint64_t> ran{0};        // runs that exited 0
    std::atomic<std::uint64_t> failed{0};     // exited non-zero, died of a signal, or could not start
    std::atomic<std::uint64_t> timed_out{0};  // killed at the timeout (also counted as failed)
    std::atomic<std::uint64_t> dropped{0};    // never run: too many waiting, or given up at finish()
};

class HookRunner {
public:
    // `notice`: what the user should see (a failure, a drop); called on the runner's thread.
    HookRunner(HookOptions options, std::function<void(const std::string&)> notice);
    ~HookRunner();  // finish(0): the waiting are dropped, the running command ended
    HookRunner(const HookRunner&) = delete;
    HookRunner& operator=(const HookRunner&) = delete;

    // Queues one run; false (and counted as dropped) when max_pending already wait. Never blocks.
    bool submit(HookEvent event);
    // Waits at most `limit` for every queued run to end, then drops what still waits and ends the running
    // command as its timeout would (SIGTERM to all it started, SIGKILL half a second later). Stopping msmon, `limit`
    // is what is left of the stop's grace (core/signals/stop_request.hpp): gone within 2 s of a signal.
    void finish(std::chrono::milliseconds limit);
    const HookCounters& counters() const { return counters_; }

private:
    void loop();
    void run_one(const HookEvent& event);

    HookOptions options_;
    std::function<void(const std::string&)> notice_;
    HookCounters counters_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<HookEvent> queue_;
    bool running_ = false, stopping_ = false;
    std::atomic<bool> abort_{false};  // finish() gave up waiting: end the running command now
    std::thread thread_;              // started by the constructor once the rest is set up
};

}  // namespace msmon
