// A thread that runs one task when woken (after a commit) but at most once per interval, and at least once
// per `idle` interval regardless; stop() runs it one last time, then joins.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace msmon {

class PeriodicWorker {
public:
    // `task` returns false when it failed: the next try then waits `idle` (a back-off), not `interval`.
    PeriodicWorker(std::function<bool()> task, std::chrono::milliseconds interval, std::chrono::milliseconds idle)
        : task_(std::move(task)), interval_(interval), idle_(idle), thread_([this] { loop(); }) {}
    ~PeriodicWorker() { stop(); }
    PeriodicWorker(const PeriodicWorker&) = delete;
    PeriodicWorker& operator=(const PeriodicWorker&) = delete;

    void wake() {
        std::lock_guard lock(mu_);
        woken_ = true;
        cv_.notify_all();
    }
    void stop() {
        {
            std::lock_guard lock(mu_);
            stopping_ = true;
            cv_.notify_all();
        }
        if (thread_.joinable()) thread_.join();
    }

private:
    void loop() {
        using Clock = std::chrono::steady_clock;
        auto last = Clock::now() - interval_;
        bool ok = true;
        while (true) {
            {
                std::unique_lock lock(mu_);
                if (!ok) {
                    // Failed last time: back off a whole idle interval, wake-ups or not.
                    cv_.wait_until(lock, last + idle_, [&] { return stopping_; });
                } else {
                    // Woken: run once `interval` has passed since the last run (batches of about one
                    // interval).
                    cv_.wait_until(lock, last + idle_, [&] { return stopping_ || woken_; });
                    if (woken_ && !stopping_) cv_.wait_until(lock, last + interval_, [&] { return stopping_; });
                }
                if (stopping_) break;
                woken_ = false;
            }
            last = Clock::now();
            ok = task_();
        }
        task_();
    }

    std::function<bool()> task_;
    std::chrono::milliseconds interval_, idle_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool woken_ = false, stopping_ = false;
    std::thread thread_;  // last: started once the rest is set up
};

}  // namespace msmon
