// The writer thread: commits batches in order, one transaction each, retrying until the store takes them - or,
// once the process is asked to stop (`stopping`), no more: a stop is honoured on a full disk too.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "core/ingest/ingest_engine.hpp"

namespace msmon {

class BatchCommitter {
public:
    // `stopping` (optional): set (from a signal handler, say) when the process is to stop. A commit failing then is
    // not retried: it and the batches after it are dropped (their file offsets are not stored, so their files are
    // read again from where the store has them next time), and the thread ends within kStopCheck.
    BatchCommitter(IngestStore& store, IngestCounters& counters, std::function<void(const CommitInfo&)> on_commit,
                   std::function<void(const std::string&)> on_notice, std::size_t capacity = 3,
                   const std::atomic<bool>* stopping = nullptr);
    static constexpr auto kStopCheck = std::chrono::milliseconds(200);
    ~BatchCommitter();

    // Blocks while `capacity` batches are waiting (back-pressure on the reading thread).
    void push(RecordBatch batch);
    // Blocks until everything pushed is committed (or the store refused a batch).
    void wait_committed();
    // Commits everything pushed, then stops the thread. With `abandon`, batches not yet committed are
    // dropped (their file offsets are not stored, so they are read again next time).
    void finish(bool abandon);
    // Set when the store refused a batch for good (IngestStore::failure_may_pass): the thread has stopped and
    // nothing from that batch on is stored.
    std::string refused();
    // Batches dropped because a stop came while the store failed to commit (0 otherwise).
    std::size_t dropped_on_stop();

private:
    void loop();

    IngestStore& store_;
    IngestCounters& counters_;
    std::function<void(const CommitInfo&)> on_commit_;
    std::function<void(const std::string&)> on_notice_;
    std::size_t capacity_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<RecordBatch> queue_;
    bool closing_ = false;
    bool abandon_ = false;
    std::string refused_;
    const std::atomic<bool>* stopping_;
    std::size_t dropped_on_stop_ = 0;
    std::thread thread_;
};

}  // namespace msmon
