// The writer thread: commits batches in order, one transaction each, retrying until the store takes them.
#pragma once

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
    BatchCommitter(IngestStore& store, IngestCounters& counters, std::function<void(const CommitInfo&)> on_commit,
                   std::function<void(const std::string&)> on_notice, std::size_t capacity = 3);
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
    std::thread thread_;
};

}  // namespace msmon
