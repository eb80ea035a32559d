// The ingest pipeline: discover → watch → tail → parse on one thread, commit batches on another.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/detect/detector_options.hpp"
#include "core/detect/new_incidents.hpp"
#include "core/ingest/backfill_plan.hpp"
#include "core/model/ingest_store.hpp"

namespace msmon {

struct IngestOptions {
    std::vector<std::string> roots;
    bool follow = false;                // keep tailing until stop() instead of returning when caught up
    int poll_ms = 0;                    // > 0: poll instead of inotify
    std::size_t batch_rows = 100000;    // rows per transaction at most
    std::size_t read_chunk = 4u << 20;  // bytes read from a file at once; a longer line is skipped
    // Batches handed to the writer and not yet committed, at most: the reading waits beyond (each ~14 MB at
    // batch_rows with its files' progress and detector states).
    std::size_t batches_waiting = 3;
    // A backlog is read newest first (core/ingest/backfill_plan.hpp): every rank's newest files, the other files,
    // then the history in one ascending step order across ranks; what the newest files hold is judged after the
    // history (msmon-tui: someone opening a long run wants every rank now). Otherwise folder by folder, each
    // folder's files in step order (msmon ingest, --snapshot, the agent: their consumers want steps in order).
    bool newest_first = false;
    DetectorOptions detectors;
};

// Running totals, readable from any thread.
struct IngestCounters {
    std::atomic<std::uint64_t> files{0};    // files tracked
    std::atomic<std::uint64_t> rows{0};     // rows committed
    std::atomic<std::uint64_t> values{0};   // values committed (one op of one row)
    std::atomic<std::uint64_t> tensors{0};  // new tensor streams committed
    std::atomic<std::uint64_t> issues{0};   // malformed lines committed
    std::atomic<std::uint64_t> batches{0};  // transactions committed
    std::atomic<std::uint64_t> commit_failures{0};
    std::atomic<std::uint64_t> restarts{0};               // files truncated or replaced
    std::atomic<std::uint64_t> cross_rank_peak_bytes{0};  // most memory values waiting for other ranks took
};

struct CommitInfo {
    std::size_t rows = 0;
    std::size_t values = 0;
    std::chrono::steady_clock::time_point committed_at;
    const RecordBatch* batch = nullptr;  // valid only during the callback
};

class IngestEngine {
public:
    IngestEngine(IngestStore& store, IngestOptions options);
    ~IngestEngine();
    IngestEngine(const IngestEngine&) = delete;
    IngestEngine& operator=(const IngestEngine&) = delete;

    // Called on the writer thread after every commit.
    std::function<void(const CommitInfo&)> on_commit;
    // Called once on the reader thread when every file there was when run() began has been read and committed:
    // from then on, what is committed was written while msmon watched.
    std::function<void()> on_caught_up;
    // Optional, for tests waiting on the program: called on the reader thread while following, once caught up,
    // each time it is about to wait for changes with nothing left to read or commit. Every file change made
    // before `seen` has then been read and committed (the stamp lags by one wait: a change that woke the
    // reader is covered by the next call). `held_until`: findings held for a rank's next step are emitted on
    // their own then, if that step does not come first; nullopt when none are held.
    std::function<void(std::chrono::steady_clock::time_point seen,
                       std::optional<std::chrono::steady_clock::time_point> held_until)>
        on_quiet;
    // Things the user should see (fallback to polling, commit failures, ...). Called from either thread.
    std::function<void(const std::string&)> on_notice;

    // Runs until caught up (or, with follow, until stop()). Returns false if it could not start at all.
    bool run(std::string& error);
    // Async-signal-safe: asks run() to finish what it committed and return.
    void stop();

    const IngestCounters& counters() const { return counters_; }
    const char* watch_mode() const;
    // on_caught_up has been called (any thread).
    bool caught_up() const;
    // Monitored folders that are not there (not made yet, or removed), waited for (any thread).
    int roots_missing() const;
    // Where reading stood at the latest quiet point while following (any thread); nullopt before the first.
    std::optional<ReadProgress> read_progress() const;
    // How far reading a backlog has come (any thread): active while history is still being read.
    BackfillProgress backfill() const;
    // Distinct ranks read so far (any thread).
    std::size_t rank_count() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    IngestCounters counters_;
};

}  // namespace msmon
