// Batches are committed strictly in order: a file's offset never runs ahead of its rows.
#include "core/ingest/batch_committer.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <string>

namespace msmon {

BatchCommitter::BatchCommitter(IngestStore& store, IngestCounters& counters,
                               std::function<void(const CommitInfo&)> on_commit,
                               std::function<void(const std::string&)> on_notice, std::size_t capacity,
                               const std::atomic<bool>* stopping)
    : store_(store),
      counters_(counters),
      on_commit_(std::move(on_commit)),
      on_notice_(std::move(on_notice)),
      capacity_(capacity),
      stopping_(stopping),
      thread_([this] { loop(); }) {}

BatchCommitter::~BatchCommitter() {
    finish(true);
}

void BatchCommitter::push(RecordBatch batch) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return queue_.size() < capacity_ || abandon_; });
    if (abandon_) return;
    queue_.push_back(std::move(batch));
    cv_.notify_all();
}

void BatchCommitter::wait_committed() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return queue_.empty() || abandon_; });
}

void BatchCommitter::finish(bool abandon) {
    {
        std::lock_guard lock(mu_);
        closing_ = true;
        abandon_ = abandon_ || abandon;
        cv_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
}

std::string BatchCommitter::refused() {
    std::lock_guard lock(mu_);
    return refused_;
}

std::size_t BatchCommitter::dropped_on_stop() {
    std::lock_guard lock(mu_);
    return dropped_on_stop_;
}

void BatchCommitter::loop() {
    auto delay = std::chrono::milliseconds(50);
    long failed_attempts = 0;  // in a row, for the batch at the head of the queue
    while (true) {
        RecordBatch* batch = nullptr;
        {
            std::unique_lock lock(mu_);
            cv_.wait(lock, [&] { return !queue_.empty() || closing_; });
            if (queue_.empty() || abandon_) return;
            batch = &queue_.front();
        }
        try {
            store_.commit(*batch);
        } catch (const std::exception& e) {
            counters_.commit_failures.fetch_add(1);
            if (!store_.failure_may_pass(e)) {
                const std::string msg = std::string(
                                            "the store refuses a batch, ingest stops (nothing from this batch on "
                                            "is stored; its files are read again next time): ") +
                                        e.what();
                // Not logged here: the engine returns it as its error, and its caller shows and logs it once.
                std::lock_guard lock(mu_);
                refused_ = msg;
                abandon_ = true;
                cv_.notify_all();
                return;
            }
            ++failed_attempts;
            const std::string msg = std::string("store commit failed, reading paused, will retry: ") + e.what();
            spdlog::error("{}", msg);
            if (on_notice_) on_notice_(msg);
            // The retry waits in slices, looking at `stopping` (a signal handler can only set a flag): once the
            // process is asked to stop, what failed is dropped rather than retried without end (a full disk).
            const auto retry_at = std::chrono::steady_clock::now() + delay;
            std::unique_lock lock(mu_);
            while (!abandon_ && !(stopping_ && stopping_->load()) && std::chrono::steady_clock::now() < retry_at)
                cv_.wait_for(lock, std::min<std::chrono::steady_clock::duration>(
                                       kStopCheck, retry_at - std::chrono::steady_clock::now()));
            if (!abandon_ && stopping_ && stopping_->load()) {
                dropped_on_stop_ = queue_.size();
                abandon_ = true;
                cv_.notify_all();  // a reader waiting to push goes on
            }
            if (abandon_) return;
            delay = std::min(delay * 2, std::chrono::milliseconds(5000));
            continue;
        }
        delay = std::chrono::milliseconds(50);
        if (failed_attempts > 0) {
            const std::string msg = "store commit works again after " + std::to_string(failed_attempts) +
                                    " failed attempts: reading resumed, nothing was lost";
            spdlog::info("{}", msg);
            if (on_notice_) on_notice_(msg);
            failed_attempts = 0;
        }
        CommitInfo info;
        info.rows = batch->rows.size();
        info.values = batch->value_count();
        info.committed_at = std::chrono::steady_clock::now();
        info.batch = batch;
        counters_.rows.fetch_add(info.rows);
        counters_.values.fetch_add(info.values);
        counters_.tensors.fetch_add(batch->new_tensors.size());
        counters_.issues.fetch_add(batch->issues.size() + batch->unstored_issues);
        counters_.batches.fetch_add(1);
        if (on_commit_) on_commit_(info);
        std::lock_guard lock(mu_);
        queue_.pop_front();
        cv_.notify_all();
    }
}

}  // namespace msmon
