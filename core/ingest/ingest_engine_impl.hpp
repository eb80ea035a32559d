// The ingest engine's state and steps, shared by the files that hold them, one concern each:
//   engine_folders.cpp   the monitored tree: roots, links out of it, folders found, watched and lost;
//   engine_rotation.cpp  rotated logs: progress follows the file, not its name;
//   engine_reading.cpp   followed files: reading them through their format's reader, batching, forgetting;
//   ingest_engine.cpp    the loop, and IngestEngine's public face.
// Private to core/ingest: nothing outside the engine includes it.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/detect/detector_set.hpp"
#include "core/ingest/backfill_plan.hpp"
#include "core/ingest/batch_committer.hpp"
#include "core/ingest/file_formats.hpp"
#include "core/ingest/file_reader.hpp"
#include "core/ingest/ingest_engine.hpp"
#include "core/ingest/source_layout.hpp"
#include "core/ingest/tracked_file.hpp"
#include "core/ingest/whole_file_reader.hpp"
#include "core/model/key_registry.hpp"
#include "core/watch/change_watcher.hpp"

namespace msmon {

struct TrackedDir {
    DirRole role = DirRole::root;
    int rank = 0;
    // msprobe CSV runs. A v1 run folder is a run at once; a rank_<R> folder only when its first CSV is seen: it may
    // hold only MindFormers logs or TensorBoard event files, which belong to the MindFormers run of the rank.
    std::int64_t run_id = 0;
    std::string mf_output;        // MindFormers output folder the logs in here belong to
    std::string time_label, uid;  // v1 run folder name parts
    int depth = 0;                // folders below the root it was found under (a root is 0)
};

// Folders with names msmon does not know are looked into, as a root is, down to this many levels below the
// folder the user named: msprobe's output under a custom MONITOR_OUTPUT_DIR name, MindFormers' event files under
// worker/tensorboard. Hidden folders are not; past kMaxSearchedFolders such folders, no more are.
inline constexpr int kSearchDepth = 4;
inline constexpr std::size_t kMaxSearchedFolders = 2000;

struct IngestEngine::Impl {
    using Clock = std::chrono::steady_clock;

    Impl(IngestEngine& owner, IngestStore& store, IngestOptions options)
        : owner(owner), store(store), options(std::move(options)) {}

    IngestEngine& owner;
    IngestStore& store;
    IngestOptions options;
    std::atomic<bool> stopping{false};
    std::atomic<bool> caught_up{false};
    mutable std::mutex progress_mu;
    std::optional<ReadProgress> progress;  // at the latest quiet point (following, caught up)
    std::atomic<ChangeWatcher*> watcher_ptr{nullptr};
    std::unique_ptr<ChangeWatcher> watcher;
    std::vector<std::unique_ptr<ChangeWatcher>> retired;
    std::unique_ptr<KeyRegistry> keys;
    std::atomic<const KeyRegistry*> keys_ptr{nullptr};  // for rank_count() from other threads
    // The readers, by the ReaderId the format table gives each format.
    WholeFileReader* wholes = nullptr;  // also asked when a file caught mid-write is due again
    std::array<std::unique_ptr<FileReader>, kReaderCount> readers;
    FileReader& reader_of(const TrackedFile& f) {
        return *readers[static_cast<std::size_t>(format_info(f.format).reader)];
    }
    std::unique_ptr<DetectorSet> detectors;
    std::unique_ptr<BatchCommitter> committer;
    static constexpr std::chrono::milliseconds kUnreadableRetry{2000};
    std::map<std::string, TrackedDir> dirs;
    std::set<std::string> unreadable;  // tracked folders that cannot be listed or watched now
    Clock::time_point last_unreadable_retry{};
    // Followed files by path; the key views the file's own path (one copy of each of 200,000 paths, not two).
    using FileMap = std::unordered_map<std::string_view, std::unique_ptr<TrackedFile>>;
    FileMap files;
    std::deque<TrackedFile*> dirty;
    std::vector<TrackedFile*> in_batch;
    RecordBatch batch;
    std::int64_t next_file_id = 1;
    static constexpr std::size_t kFilesPerBatch = 8192;
    static constexpr std::size_t kIssuesPerBatch = 8192;  // stored malformed lines (each with its excerpt)
    std::size_t batch_limit = 8192;  // rows in the batch being built before it is handed to the writer
    std::string bytes;

    void notice(const std::string& msg);

    // ---- the monitored tree's bounds (engine_folders.cpp)
    // ----------------------------------------------------------------- A symbolic link in the tree is followed only
    // when it leads to a place inside one of the roots (their real paths: a symlinked root itself is fine). A link out
    // of the tree (to /etc/passwd, another user's files) is skipped with a notice, once.
    std::vector<std::string> real_roots;
    std::set<std::string> refused_links;
    std::set<std::string> refused_dirs;   // rank folders whose number is no rank: named once
    std::set<std::string> not_yet_roots;  // roots that did not exist yet when run() began
    std::size_t searched_folders = 0;     // folders of unknown names looked into (kMaxSearchedFolders)
    // Roots removed while followed (rm -rf JOB; mkdir JOB): looked for every second, read again when back.
    std::set<std::string> missing_roots;
    std::atomic<int> missing_count{0};   // missing_roots.size(), for other threads
    std::vector<std::string> root_dirs;  // the tracked folders that are roots
    Clock::time_point last_missing_check{};

    void root_removed(const std::string& root);

    void retry_missing_roots();

    bool leaves_roots(const std::string& path);

    // ---- discovery (engine_folders.cpp) ---------------------------------------------------------------------------

    bool has_v1_csv_files(const std::string& dir);

    void add_root(const std::string& given);

    // `parent_output`: the MindFormers output folder logs under this folder belong to.
    void track_dir(const std::string& path, const DirClass& c, const std::string& parent_output, int depth = 0);

    // Starts watching a tracked folder. A folder that cannot be read (permission denied) is said once and
    // looked at again every kUnreadableRetry until it can; the inotify watch limit switches to polling.
    bool watch_dir(const std::string& path);

    void retry_unreadable();

    void switch_to_polling(const std::string& why);

    void scan_dir(const std::string& path);

    std::int64_t msprobe_run_id(const std::string& path, const TrackedDir& td);

    std::int64_t log_run_id(const TrackedDir& td, int rank);

    // A new or changed entry in a tracked folder.
    void on_entry(const std::string& dir, const std::string& name, bool entry_is_dir);

    // "info.log.3": a rotated segment of a log.
    static bool is_rotated_name(const std::string& name);

    // ---- rotated logs: progress follows the file, not its name (engine_rotation.cpp)
    // -------------------------------------------- A log renamed (mv rotation, also while msmon was stopped) or copied
    // (copy-truncate) holds what was read already under its old name: it goes on from that progress instead of being
    // read again from byte 0 (its start and stop events would be stored twice, a relaunch that never happened). The
    // progress of a log whose path now holds another file is kept here until a path claims it.
    std::deque<FileProgress> retired_logs;
    static constexpr std::size_t kRetiredLogs = 64;

    // Progress read before under another name that `path` continues: a retired one, or a live log's of the same
    // folder. `allow_copy`: a copy (another inode, the same first bytes) counts. False: `path` is still shorter
    // than what identifies a candidate (a copy may be in progress).
    bool claim_progress(const std::string& dir, const std::string& path, bool allow_copy,
                        std::optional<FileProgress>& out);

    void retire(const FileProgress& p);

    // Before a log is read: if its path holds another file now, it takes the progress that file had under its
    // old name, if any; its own progress is kept for the name its file moved to.
    void follow_rotation(TrackedFile& f);

    // ---- followed files (engine_reading.cpp) ---------------------------------------------------------------
    FileMap::iterator add_file(TrackedFile f);

    void mark_dirty(TrackedFile& f);

    // A file known from the store, as the engine follows it.
    TrackedFile tracked_from_progress(FileProgress p);

    void restore(const IngestSnapshot& snap);

    // ---- forgetting files read to their end (engine_reading.cpp)
    // ----------------------------------------------------------- Files whose progress is committed, read to their end
    // and not marked again are dropped from memory (the format table's forgotten_when_read); the next change to one
    // looks its progress up in the store again.
    std::deque<TrackedFile*> settling;  // files carried by batches not yet known to be committed, in push order
    std::uint64_t pushed_batches = 0;

    bool committed(const TrackedFile& f) const { return f.batch_seq <= owner.counters_.batches.load(); }

    void forget_if_done(TrackedFile& f);

    void forget_settled();

    // ---- reading (engine_reading.cpp) -----------------------------------------------------------------------------

    void note_in_batch(TrackedFile& f);

    void flush();

    void read_file(TrackedFile& f);

    // When the rows just read were written: while following, now (inotify or the poll saw them within moments);
    // for what was there before msmon looked, the file's mtime. One entry per step of the read.
    void note_step_times(const TrackedFile& f, std::size_t rows_before, std::int64_t mtime_ms);

    void drain_dirty();

    // A watcher's news (engine_folders.cpp).
    void handle_changes(const std::vector<PathChange>& changes, bool rescan);

    // ---- a backlog, newest first (engine_backfill.cpp) -----------------------------------------------------------
    // The first scan lists files into `plan` instead of reading them; the loop then hands them to reading in the
    // plan's order (core/ingest/backfill_plan.hpp), a chunk at a time, with the watcher's news read between chunks
    // so that live lines wait for one chunk at most. The window's rows (each rank's newest files) are stored at once
    // but judged after the rank's history: a run's rows from `judge_from[run]` on are held back from the detectors
    // ("deferred") until the plan is read, then read back from the store and judged in step order. The marks are
    // stored with the rows (setting kBackfillSetting), so a restart judges what a killed session stored unjudged.
    enum class BackfillPhase { window, others, history, done };
    std::unique_ptr<BackfillPlan> plan;           // released once every file in it is handed to reading
    BackfillProgress plan_final;                  // its progress then
    std::int64_t cross_rank_judged_through = -1;  // the history's steps judged across ranks so far
    bool planning = false;                        // the first scan: files are listed into `plan`, not read
    BackfillPhase phase = BackfillPhase::done;
    std::map<std::int64_t, std::int64_t> judge_from;  // run → its first step stored but not judged yet
    std::set<std::string> deferred_kinds;             // kinds of those rows
    std::int64_t deferred_last = -1;                  // the highest step among them
    bool marks_changed = false;
    bool live_news = false;       // the watcher told of changes: what they bring is committed without waiting
    bool window_reading = false;  // the window's files are being read: their runs are marked
    // What is said of the backlog is what the store holds: a progress is published once the batch that carries the
    // last rows it counts is committed (the views read the store beside it: a span said read before its rows are
    // committed would be drawn as a gap). Under progress_mu: (batch number, progress), in push order.
    BackfillProgress backfill_progress;
    std::deque<std::pair<std::uint64_t, BackfillProgress>> backfill_at_commit;
    std::optional<BackfillProgress> backfill_fed;  // the plan's progress at its last chunk, until that chunk is read
    static constexpr std::size_t kBackfillChunk = 256;
    // The history's batches are cut between parts (one folder's files of one block: BackfillPlan::take_history),
    // so that each tensor's steps of a block go to the store as one chunk: a part is read whole, and the batch is
    // committed before the next part when that one would take it past options.batch_rows (judged by the size of the
    // last part read whole into one batch). A part larger than that is cut when the batch is full, as before.
    bool part_done = true;           // the last part taken is whole
    std::size_t part_rows_from = 0;  // batch.rows.size() when the part being read began
    std::uint64_t part_batch = 0;    // pushed_batches then
    std::size_t part_rows = 0;       // rows of the last part read whole into one batch
    static constexpr const char* kBackfillSetting = "backfill.judge_from";

    // Hands the plan's next files to reading; false once the plan is read.
    bool feed_backfill();
    // In flush(): keeps the batch's rows at or past their run's mark away from the detectors (they go to the store).
    void observe_with_deferral();
    // Once the plan is read: judges the deferred rows, read back from the store in step order.
    void judge_deferred();
    void restore_marks(const std::vector<std::pair<std::string, std::string>>& settings);
    // After reading what was fed: the progress waits for the batch that holds its last rows (see above).
    void publish_backfill();
    // The newest progress whose batch is committed (under progress_mu).
    const BackfillProgress& committed_backfill();
    bool backfilling() const { return phase != BackfillPhase::done || !judge_from.empty(); }

    // ---- the loop (ingest_engine.cpp) --------------------------------------------------------------------

    int wait_ms() const;

    // The store refused a batch for good: reading stops, with the store's reason.
    bool refused(std::string& error);

    bool run(std::string& error);
};

}  // namespace msmon
