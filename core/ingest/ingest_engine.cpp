// The ingest engine: which folders and files are followed, and the read → parse → batch loop.
#include "core/ingest/ingest_engine.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>

#include "core/detect/detector_set.hpp"
#include "core/ingest/batch_committer.hpp"
#include "core/ingest/csv_consumer.hpp"
#include "core/ingest/event_file_consumer.hpp"
#include "core/ingest/issue_cap.hpp"
#include "core/ingest/key_registry.hpp"
#include "core/ingest/log_consumer.hpp"
#include "core/ingest/source_layout.hpp"
#include "core/ingest/tracked_file.hpp"
#include "core/ingest/whole_file_reader.hpp"
#include "core/tail/file_tailer.hpp"
#include "core/text/csv_record.hpp"
#include "core/watch/change_watcher.hpp"

namespace msmon {

namespace {

using Clock = std::chrono::steady_clock;

struct TrackedDir {
    DirRole role = DirRole::root;
    int rank = 0;
    // msprobe CSV runs. A v1 run folder is a run at once; a rank_<R> folder only when its first CSV is seen: it may
    // hold only MindFormers logs or TensorBoard event files, which belong to the MindFormers run of the rank.
    std::int64_t run_id = 0;
    std::string mf_output;        // MindFormers output folder the logs in here belong to
    std::string time_label, uid;  // v1 run folder name parts
};

std::string canonical(const std::string& path) {
    char buf[PATH_MAX];
    if (::realpath(path.c_str(), buf)) return buf;
    return path;
}

std::string basename_of(const std::string& path) {
    auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string dirname_of(const std::string& path) {
    auto slash = path.find_last_of('/');
    return slash == std::string::npos || slash == 0 ? std::string("/") : path.substr(0, slash);
}

bool is_dir(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

struct DirEntry {
    std::string name;
    bool dir = false;
};

std::vector<DirEntry> list_dir(const std::string& dir) {
    std::vector<DirEntry> out;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return out;
    while (dirent* e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        bool sub = e->d_type == DT_DIR;
        if (e->d_type == DT_UNKNOWN || e->d_type == DT_LNK) sub = is_dir(dir + "/" + name);
        out.push_back({std::move(name), sub});
    }
    ::closedir(d);
    return out;
}

}  // namespace

struct IngestEngine::Impl {
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
    std::unique_ptr<CsvConsumer> csv;
    std::unique_ptr<LogConsumer> logs;
    std::unique_ptr<EventFileConsumer> events;
    std::unique_ptr<WholeFileReader> wholes;
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

    void notice(const std::string& msg) {
        spdlog::warn("{}", msg);
        if (owner.on_notice) owner.on_notice(msg);
    }

    // ---- the monitored tree's bounds -----------------------------------------------------------------
    // A symbolic link in the tree is followed only when it leads to a place inside one of the roots (their real
    // paths: a symlinked root itself is fine). A link out of the tree (to /etc/passwd, another user's files) is
    // skipped with a notice, once.
    std::vector<std::string> real_roots;
    std::set<std::string> refused_links;
    std::set<std::string> refused_dirs;  // rank folders whose number is no rank: named once
    // Roots removed while followed (rm -rf JOB; mkdir JOB): looked for every second, read again when back.
    std::set<std::string> missing_roots;
    std::vector<std::string> root_dirs;  // the tracked folders that are roots
    Clock::time_point last_missing_check{};

    void root_removed(const std::string& root) {
        if (!missing_roots.insert(root).second) return;
        // Its folders' watches went with it; forget them all so that the root is tracked afresh.
        for (auto it = dirs.begin(); it != dirs.end();) {
            if (it->first == root || it->first.rfind(root + "/", 0) == 0) {
                watcher->remove_dir(it->first);
                unreadable.erase(it->first);
                it = dirs.erase(it);
            } else {
                ++it;
            }
        }
        notice("the monitored folder '" + root +
               "' was removed; its stored values are kept, and it is read again "
               "if it comes back");
    }

    void retry_missing_roots() {
        if (missing_roots.empty() || Clock::now() - last_missing_check < std::chrono::seconds(1)) return;
        last_missing_check = Clock::now();
        for (auto it = missing_roots.begin(); it != missing_roots.end();) {
            if (!is_dir(*it)) {
                ++it;
                continue;
            }
            notice("the monitored folder '" + *it + "' is back: reading it");
            const std::string root = *it;
            it = missing_roots.erase(it);
            add_root(root);
        }
    }

    bool leaves_roots(const std::string& path) {
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return false;
        const std::string target = canonical(path);
        for (const auto& root : real_roots)
            if (target == root || (target.size() > root.size() && target.compare(0, root.size(), root) == 0 &&
                                   (root == "/" || target[root.size()] == '/')))
                return false;
        if (refused_links.insert(path).second)
            notice("skipped '" + path + "': a symbolic link to '" + target + "', outside the monitored folder");
        return true;
    }

    // ---- discovery -------------------------------------------------------------------------------

    bool has_v1_csv_files(const std::string& dir) {
        for (const auto& e : list_dir(dir))
            if (!e.dir && classify_file(DirRole::run_v1, 0, e.name)) return true;
        return false;
    }

    void add_root(const std::string& given) {
        const std::string path = canonical(given);
        const std::string name = basename_of(path);
        if (auto c = classify_child_dir(DirRole::root, name); c && c->role != DirRole::root) {
            track_dir(path, *c, dirname_of(path));
        } else if (is_csv2tb_dir_name(name)) {
            track_dir(path, DirClass{DirRole::tb_root, 0, "", ""}, dirname_of(path));
        } else if (has_v1_csv_files(path)) {
            notice("'" + path + "' holds msprobe CSVs but its name has no rank (<time>-rank<N>-<uid>): read as rank 0");
            track_dir(path, DirClass{DirRole::run_v1, 0, "", ""}, dirname_of(path));
        } else {
            track_dir(path, DirClass{DirRole::root, 0, "", ""}, path);
        }
    }

    // `parent_output`: the MindFormers output folder logs under this folder belong to.
    void track_dir(const std::string& path, const DirClass& c, const std::string& parent_output) {
        if (dirs.count(path)) return;
        TrackedDir td;
        td.role = c.role;
        td.rank = c.rank;
        td.mf_output = parent_output;
        td.time_label = c.time_label;
        td.uid = c.uid;
        if (c.role == DirRole::run_v1) td.run_id = msprobe_run_id(path, td);
        if (c.role == DirRole::run_v2) td.mf_output = dirname_of(dirname_of(path));  // <out>/log/rank_<R>
        if (c.role == DirRole::mf_rank_log) td.mf_output = dirname_of(dirname_of(path));
        if (c.role == DirRole::mf_msrun) td.mf_output = dirname_of(path);
        dirs[path] = td;
        if (watch_dir(path)) scan_dir(path);
    }

    // Starts watching a tracked folder. A folder that cannot be read (permission denied) is said once and
    // looked at again every kUnreadableRetry until it can; the inotify watch limit switches to polling.
    bool watch_dir(const std::string& path) {
        std::string error;
        switch (watcher->add_dir(path, error)) {
            case ChangeWatcher::Add::ok:
                if (unreadable.erase(path)) notice("folder '" + path + "' can be read again: reading it");
                return true;
            case ChangeWatcher::Add::limit_reached:
                switch_to_polling("cannot watch '" + path + "' (" + error + ")");
                return !unreadable.count(path);
            case ChangeWatcher::Add::failed:
                if (unreadable.insert(path).second)
                    notice("cannot read folder '" + path + "' (" + error +
                           "): its files are not read until it can be; "
                           "trying again every " +
                           std::to_string(kUnreadableRetry.count()) + " ms");
                return false;
        }
        return false;
    }

    void retry_unreadable() {
        if (unreadable.empty() || Clock::now() - last_unreadable_retry < kUnreadableRetry) return;
        last_unreadable_retry = Clock::now();
        const std::vector<std::string> again(unreadable.begin(), unreadable.end());
        for (const auto& path : again)
            if (dirs.count(path) && watch_dir(path)) scan_dir(path);
        for (auto& [_, f] : files)
            if (f->read_failed) mark_dirty(*f);
    }

    void switch_to_polling(const std::string& why) {
        const int ms = options.poll_ms > 0 ? options.poll_ms : 1000;
        notice(why + "; falling back to polling every " + std::to_string(ms) + " ms");
        retired.push_back(std::move(watcher));  // stop() may still hold the old pointer
        watcher = make_poll_watcher(ms);
        watcher_ptr.store(watcher.get());
        for (const auto& [path, _] : dirs) {
            std::string error;
            if (watcher->add_dir(path, error) != ChangeWatcher::Add::ok) unreadable.insert(path);
        }
        for (const auto& [path, _] : dirs)
            if (!unreadable.count(path)) scan_dir(path);
    }

    void scan_dir(const std::string& path) {
        auto entries = list_dir(path);
        // Files in reading order (step ranges ascending, rotated logs oldest first): per series, values arrive
        // in step order, which detectors and last-write-wins rely on.
        std::vector<std::pair<std::int64_t, std::string>> file_order;
        auto it = dirs.find(path);
        if (it == dirs.end()) return;
        for (const auto& e : entries) {
            if (e.dir) continue;
            if (auto fc = classify_file(it->second.role, it->second.rank, e.name))
                file_order.emplace_back(fc->order, e.name);
        }
        std::sort(file_order.begin(), file_order.end());
        for (const auto& e : entries)
            if (e.dir) on_entry(path, e.name, true);
        for (const auto& [_, name] : file_order) on_entry(path, name, false);
    }

    std::int64_t msprobe_run_id(const std::string& path, const TrackedDir& td) {
        RunInfo proto;
        proto.rank = td.rank;
        proto.path = path;
        proto.time_label = td.time_label;
        proto.uid = td.uid;
        proto.format = td.role == DirRole::run_v2 ? "msprobe_v2" : "msprobe";
        return keys->run_id(proto, batch);
    }

    std::int64_t log_run_id(const TrackedDir& td, int rank) {
        RunInfo proto;
        proto.rank = rank;
        proto.path = td.mf_output + "#mindformers#rank" + std::to_string(rank);
        proto.format = "mindformers";
        return keys->run_id(proto, batch);
    }

    // A new or changed entry in a tracked folder.
    void on_entry(const std::string& dir, const std::string& name, bool entry_is_dir) {
        auto it = dirs.find(dir);
        if (it == dirs.end()) return;
        const TrackedDir td = it->second;
        const std::string path = dir + "/" + name;
        if (entry_is_dir) {
            if (unreadable.count(path)) {  // e.g. chmod: try it now rather than at the next retry
                if (watch_dir(path)) scan_dir(path);
                return;
            }
            if (dirs.count(path)) return;
            if (auto c = classify_child_dir(td.role, name)) {
                if (leaves_roots(path)) return;
                if (c->role == DirRole::tb_rank && (td.role == DirRole::tb_rank || td.role == DirRole::run_v2))
                    c->rank = td.rank;
                track_dir(path, *c, name == "output" ? path : td.mf_output);
            } else if (const auto why = unreadable_rank_dir(td.role, name); why && refused_dirs.insert(path).second) {
                notice("'" + path + "' is " + *why);
            }
            return;
        }
        auto fit = files.find(path);
        if (fit == files.end()) {
            auto fc = classify_file(td.role, td.rank, name);
            if (!fc || leaves_roots(path)) return;
            if (forgotten_when_read(fc->format)) {
                if (std::optional<FileProgress> stored = store.load_file(path)) {  // read before, then forgotten
                    // The same file (inode and first bytes), no longer than what was read (a restart, a rescan
                    // after lost events): nothing to read, and nothing to hold in memory.
                    struct stat st {};
                    std::uint64_t dev = 0, ino = 0;
                    if (::stat(path.c_str(), &st) == 0 && st.st_size == stored->offset &&
                        identify_file(path, *stored, dev, ino) == FileIdentity::same_file)
                        return;
                    fit = add_file(tracked_from_progress(std::move(*stored)));
                    mark_dirty(*fit->second);
                    if (dirty.size() >= kFilesPerBatch) drain_dirty();
                    return;
                }
            }
            std::optional<FileProgress> rotated;
            // A copy (copy-truncate) is looked for only under a rotated name ("info.log.1"); a rename, under any.
            if (is_log(fc->format) && !claim_progress(dir, path, is_rotated_name(name), rotated))
                return;  // shorter than what identifies a copy: look again when it grows
            TrackedFile f;
            f.progress.id = next_file_id++;
            f.progress.path = path;
            f.progress.kind = fc->kind;
            f.format = fc->format;
            f.role = fc->csv_role;
            f.v2 = fc->v2;
            f.rank = fc->rank;
            const bool is_log = fc->format == FileFormat::log_file_sink || fc->format == FileFormat::log_stdout;
            const bool is_events = fc->format == FileFormat::tf_events;
            // Event files join the MindFormers run of their rank: a metric both write is one series.
            if (!is_log && !is_events && td.run_id == 0 && (td.role == DirRole::run_v1 || td.role == DirRole::run_v2))
                it->second.run_id = msprobe_run_id(dir, td);
            f.progress.run_id = is_log || is_events ? log_run_id(td, fc->rank) : it->second.run_id;
            if (is_log) f.progress.kind = fc->format == FileFormat::log_stdout ? "worker_log" : "info_log";
            if (is_events) f.progress.kind = "tf_events";
            if (is_whole_file(fc->format)) f.progress.kind = "json";
            if (rotated) {  // read before under its old name: go on from there
                const FileProgress mine = f.progress;
                f.progress = *rotated;
                f.progress.id = mine.id;
                f.progress.path = mine.path;
                f.progress.run_id = mine.run_id;
                f.progress.kind = mine.kind;
            }
            fit = add_file(std::move(f));
            owner.counters_.files.fetch_add(1);
        }
        mark_dirty(*fit->second);
        // A first scan of 200,000 files reads them as it goes: memory holds a batch of them, not all.
        if (dirty.size() >= kFilesPerBatch) drain_dirty();
    }

    // "info.log.3": a rotated segment of a log.
    static bool is_rotated_name(const std::string& name) {
        const auto dot = name.find_last_of('.');
        return dot != std::string::npos && dot + 1 < name.size() &&
               name.find_first_not_of("0123456789", dot + 1) == std::string::npos;
    }

    // ---- rotated logs: progress follows the file, not its name ------------------------------------------------
    // A log renamed (mv rotation, also while msmon was stopped) or copied (copy-truncate) holds what was read
    // already under its old name: it goes on from that progress instead of being read again from byte 0 (its
    // start and stop events would be stored twice, a relaunch that never happened). The progress of a log whose
    // path now holds another file is kept here until a path claims it.
    std::deque<FileProgress> retired_logs;
    static constexpr std::size_t kRetiredLogs = 64;

    static bool is_log(FileFormat f) { return f == FileFormat::log_file_sink || f == FileFormat::log_stdout; }

    // Progress read before under another name that `path` continues: a retired one, or a live log's of the same
    // folder. `allow_copy`: a copy (another inode, the same first bytes) counts. False: `path` is still shorter
    // than what identifies a candidate (a copy may be in progress).
    bool claim_progress(const std::string& dir, const std::string& path, bool allow_copy,
                        std::optional<FileProgress>& out) {
        auto consider = [&](const FileProgress& p) {
            if (p.offset == 0 || p.path == path || dirname_of(p.path) != dir) return FileIdentity::other;
            std::uint64_t dev = 0, ino = 0;
            const FileIdentity id = identify_file(path, p, dev, ino);
            if (id == FileIdentity::same_file || (allow_copy && id == FileIdentity::copy)) {
                out = p;
                out->dev = dev;
                out->ino = ino;
            }
            return id;
        };
        bool short_now = false;
        for (auto it = retired_logs.begin(); it != retired_logs.end(); ++it) {
            const FileIdentity id = consider(*it);
            short_now |= id == FileIdentity::too_short;
            if (out) {
                retired_logs.erase(it);
                break;
            }
        }
        if (!out)
            for (const auto& [_, other] : files) {
                if (!is_log(other->format)) continue;
                short_now |= consider(other->progress) == FileIdentity::too_short;
                if (out) break;
            }
        if (out) {
            notice("'" + path + "' holds what was read of '" + out->path + "' (a rotated log): going on from byte " +
                   std::to_string(out->offset));
            return true;
        }
        return !(allow_copy && short_now);
    }

    void retire(const FileProgress& p) {
        if (p.offset == 0) return;
        retired_logs.push_back(p);
        if (retired_logs.size() > kRetiredLogs) retired_logs.pop_front();
    }

    // Before a log is read: if its path holds another file now, it takes the progress that file had under its
    // old name, if any; its own progress is kept for the name its file moved to.
    void follow_rotation(TrackedFile& f) {
        if (f.progress.offset == 0) return;
        std::uint64_t dev = 0, ino = 0;
        if (identify_file(f.progress.path, f.progress, dev, ino) == FileIdentity::same_file) return;
        struct stat st {};
        if (::stat(f.progress.path.c_str(), &st) != 0) return;  // gone: nothing to read, progress stays
        const FileProgress mine = f.progress;
        std::optional<FileProgress> moved;
        claim_progress(dirname_of(mine.path), mine.path, false, moved);
        retire(mine);
        if (moved) {
            f.progress = *moved;
            f.progress.id = mine.id;
            f.progress.path = mine.path;
            f.progress.run_id = mine.run_id;
        }
    }

    FileMap::iterator add_file(TrackedFile f) {
        auto owned = std::make_unique<TrackedFile>(std::move(f));
        const std::string_view key = owned->progress.path;
        return files.emplace(key, std::move(owned)).first;
    }

    void mark_dirty(TrackedFile& f) {
        if (f.dirty) return;
        f.dirty = true;
        dirty.push_back(&f);
    }

    // A file known from the store, as the engine follows it.
    TrackedFile tracked_from_progress(FileProgress p) {
        TrackedFile f;
        const std::string name = basename_of(p.path);
        const RunInfo* run = keys->run(p.run_id);
        if (p.kind == "json") {
            f.format = name == "health_ckpts.json"    ? FileFormat::json_health
                       : name == "module_struct.json" ? FileFormat::json_module_struct
                                                      : FileFormat::json_anomaly_dump;
            const std::string parent = basename_of(dirname_of(p.path));
            f.rank = parent.rfind("rank", 0) == 0 ? std::atoi(parent.c_str() + 4) : 0;
        } else if (p.kind == "tf_events") {
            f.format = FileFormat::tf_events;
            f.rank = run ? run->rank : 0;
        } else if (p.kind == "info_log" || p.kind == "worker_log") {
            f.format = p.kind == "info_log" ? FileFormat::log_file_sink : FileFormat::log_stdout;
            f.rank = run ? run->rank : 0;
        } else {
            f.role = name == "stack_info.csv" ? CsvRole::stack_info : CsvRole::data;
            f.format = f.role == CsvRole::stack_info ? FileFormat::csv_stack : FileFormat::csv_data;
            f.v2 = run && run->format == "msprobe_v2";
        }
        if (p.header && f.format == FileFormat::csv_data) {
            std::vector<std::string_view> fields;
            std::string scratch, error;
            if (split_csv_fields(*p.header, fields, scratch)) {
                f.schema = shared_csv_header(*p.header, fields, error);
                if (f.schema) f.layout_id = keys->layout_id(f.schema->layout, batch);
            }
            f.header_rejected = !f.schema;
        }
        f.progress = std::move(p);
        return f;
    }

    void restore(const IngestSnapshot& snap) {
        for (const auto& p : snap.files) add_file(tracked_from_progress(p));
        owner.counters_.files.store(static_cast<std::uint64_t>(snap.file_count));
        next_file_id = snap.max_file_id + 1;
    }

    // ---- forgetting files read to their end ---------------------------------------------------------------
    // Files whose progress is committed, read to their end and not marked again are dropped from memory
    // (forgotten_when_read); the next change to one looks its progress up in the store again.
    std::deque<TrackedFile*> settling;  // files carried by batches not yet known to be committed, in push order
    std::uint64_t pushed_batches = 0;

    bool committed(const TrackedFile& f) const { return f.batch_seq <= owner.counters_.batches.load(); }

    void forget_if_done(TrackedFile& f) {
        if (!forgotten_when_read(f.format) || f.dirty || f.in_batch || f.settling || f.skipping_long_line ||
            f.read_failed || !committed(f))
            return;
        files.erase(std::string_view(f.progress.path));
    }

    void forget_settled() {
        while (!settling.empty() && committed(*settling.front())) {
            TrackedFile* f = settling.front();
            settling.pop_front();
            f->settling = false;
            forget_if_done(*f);
        }
    }

    // ---- reading ---------------------------------------------------------------------------------

    void note_in_batch(TrackedFile& f) {
        if (!f.in_batch) {
            f.in_batch = true;
            in_batch.push_back(&f);
        }
    }

    void flush() {
        forget_settled();
        for (TrackedFile* f : in_batch) {
            batch.files.push_back(f->progress);
            f->in_batch = false;
            f->batch_seq = pushed_batches + 1;  // this batch: it holds a file, so it is pushed below
            if (forgotten_when_read(f->format) && !f->settling) {
                f->settling = true;
                settling.push_back(f);
            }
        }
        in_batch.clear();
        if (batch.empty()) return;
        // Rows of one tensor together, steps ascending: inserts walk the b-tree in key order, and detectors see
        // each series in step order. Stable, so a repeated (tensor, step) keeps file order: the last write wins.
        std::stable_sort(batch.rows.begin(), batch.rows.end(), [](const SampleRow& a, const SampleRow& b) {
            return a.tensor_id != b.tensor_id ? a.tensor_id < b.tensor_id : a.step < b.step;
        });
        detectors->observe(batch);
        owner.counters_.cross_rank_peak_bytes.store(detectors->cross_rank_peak_bytes());
        ++pushed_batches;  // batches commit in push order: the n-th commit is this session's n-th batch
        committer->push(std::move(batch));
        batch = RecordBatch{};
    }

    ConsumeResult consume(TrackedFile& f, std::string_view data, std::int64_t file_size) {
        if (f.format == FileFormat::log_file_sink || f.format == FileFormat::log_stdout)
            return logs->consume(f, data, batch);
        if (f.format == FileFormat::tf_events) return events->consume(f, data, file_size, batch, options.read_chunk);
        return csv->consume(f, data, batch);
    }

    void read_file(TrackedFile& f) {
        if (leaves_roots(f.progress.path)) return;  // a file replaced by a link out of the tree since it was found
        if (is_log(f.format)) follow_rotation(f);
        if (is_whole_file(f.format)) {
            wholes->read(f, batch);
            return;
        }
        while (!stopping.load()) {
            TailRead r = tail_file(f.progress, bytes, options.read_chunk);
            if (r.restarted) {
                owner.counters_.restarts.fetch_add(1);
                notice("'" + f.progress.path + "' " + r.restart_reason +
                       ": reading it again from the start; stored values are kept");
                f.schema.reset();
                f.header_rejected = false;
                f.skipping_long_line = false;
                f.progress.context.clear();
                note_in_batch(f);
            }
            if (r.status == TailStatus::error) {
                if (!f.read_failed) notice("cannot read '" + f.progress.path + "': " + r.error + " (trying again)");
                f.read_failed = true;
                return;
            }
            if (f.read_failed) {
                f.read_failed = false;
                notice("'" + f.progress.path + "' can be read again");
            }
            if (r.status != TailStatus::data) return;
            note_in_batch(f);
            if (f.skipping_long_line) {
                const auto nl = bytes.find('\n');
                const std::size_t skip = nl == std::string::npos ? bytes.size() : nl + 1;
                advance_progress(f.progress, bytes, skip, nl == std::string::npos ? 0 : 1);
                if (nl != std::string::npos) f.skipping_long_line = false;
                continue;
            }
            const std::size_t rows_before = batch.rows.size();
            ConsumeResult c = consume(f, bytes, r.size);
            if (c.consumed > 0) advance_progress(f.progress, bytes, c.consumed, c.lines);
            if (f.format == FileFormat::csv_data) note_step_times(f, rows_before, r.mtime_ms);
            if (c.consumed == 0 && bytes.size() >= options.read_chunk && f.format != FileFormat::tf_events) {
                // A record longer than a whole read: report it and skip to its end, with bounded memory.
                add_issue(f.progress, batch, [&] {
                    ParseIssue p;
                    p.file_id = f.progress.id;
                    p.path = f.progress.path;
                    p.line = f.progress.line + 1;
                    p.reason = "line longer than " + std::to_string(options.read_chunk) + " bytes: skipped";
                    return p;
                });
                f.skipping_long_line = true;
                advance_progress(f.progress, bytes, bytes.size(), 0);
                continue;
            }
            // Nothing taken (a record that runs past the file's end waits at its start): reading the same bytes again
            // would take nothing again.
            if (c.consumed == 0) return;
            if (batch.rows.size() >= batch_limit) {
                flush();
                // Start small so the writer gets work early; grow to amortise commits in a long catch-up.
                batch_limit = std::min(batch_limit * 2, options.batch_rows);
            }
            if (!r.more) return;
        }
    }

    // When the rows just read were written: while following, now (inotify or the poll saw them within moments);
    // for what was there before msmon looked, the file's mtime. One entry per step of the read.
    void note_step_times(const TrackedFile& f, std::size_t rows_before, std::int64_t mtime_ms) {
        if (batch.rows.size() == rows_before) return;
        const std::int64_t wall = caught_up.load() ? std::chrono::duration_cast<std::chrono::milliseconds>(
                                                         std::chrono::system_clock::now().time_since_epoch())
                                                         .count()
                                                   : mtime_ms;
        if (wall <= 0) return;
        std::int64_t last = std::numeric_limits<std::int64_t>::min();
        for (std::size_t i = rows_before; i < batch.rows.size(); ++i) {
            const std::int64_t step = batch.rows[i].step;
            if (step == last) continue;
            last = step;
            batch.step_times.push_back({f.progress.run_id, step, wall});
        }
    }

    void drain_dirty() {
        while (!dirty.empty() && !stopping.load()) {
            TrackedFile* f = dirty.front();
            dirty.pop_front();
            f->dirty = false;
            read_file(*f);
            forget_if_done(*f);  // nothing new in it: its stored progress stands
            // A batch also carries each file's progress: 200,000 one-row files must not make 100k-row batches
            // (five of them in flight would hold ~150 MB of paths).
            if (in_batch.size() >= kFilesPerBatch || batch.issues.size() >= kIssuesPerBatch) flush();
        }
        for (const auto& path : wholes->due_retries(Clock::now()))
            if (auto it = files.find(path); it != files.end()) read_file(*it->second);
    }

    void handle_changes(const std::vector<PathChange>& changes, bool rescan) {
        if (rescan) {
            notice("file events were lost (inotify queue overflow): rescanning everything");
            std::vector<std::string> all;
            for (const auto& [path, _] : dirs) all.push_back(path);
            for (const auto& p : all) scan_dir(p);
            for (auto& [_, f] : files) mark_dirty(*f);
        }
        for (const auto& c : changes) {
            if (c.name.empty()) {
                if (c.removed && std::find(root_dirs.begin(), root_dirs.end(), c.dir) != root_dirs.end()) {
                    root_removed(c.dir);
                } else if (c.removed) {
                    watcher->remove_dir(c.dir);
                    dirs.erase(c.dir);
                    unreadable.erase(c.dir);
                    notice("folder '" + c.dir + "' was removed; its stored values are kept");
                }
                continue;
            }
            const std::string path = c.dir + "/" + c.name;
            if (c.removed) {
                if (c.is_dir && dirs.count(path)) {
                    watcher->remove_dir(path);
                    dirs.erase(path);
                    unreadable.erase(path);
                }
                continue;
            }
            on_entry(c.dir, c.name, c.is_dir);
        }
    }

    int wait_ms() const {
        int ms = 250;
        if (auto due = wholes->next_retry()) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*due - Clock::now()).count();
            ms = static_cast<int>(std::clamp<long long>(left, 0, 250));
        }
        return ms;
    }

    // The store refused a batch for good: reading stops, with the store's reason.
    bool refused(std::string& error) {
        error = committer->refused();
        if (error.empty()) return false;
        committer->finish(true);
        return true;
    }

    bool run(std::string& error) {
        IngestSnapshot snap = store.load_snapshot();
        keys = std::make_unique<KeyRegistry>(store, snap);
        keys_ptr.store(keys.get());
        csv = std::make_unique<CsvConsumer>(*keys);
        logs = std::make_unique<LogConsumer>(*keys);
        events = std::make_unique<EventFileConsumer>(*keys);
        wholes = std::make_unique<WholeFileReader>(snap.whole_files, [this](const std::string& m) { notice(m); });
        detectors = std::make_unique<DetectorSet>(store, *keys, options.detectors, snap.settings, batch,
                                                  [this](const std::string& m) { notice(m); });
        if (!detectors->ok(error)) return false;
        restore(snap);

        std::string net;
        for (const auto& r : options.roots) {
            if (!is_dir(r)) {
                error = "'" + r + "' is not a folder";
                return false;
            }
            if (net.empty()) net = network_filesystem_name(r);
        }
        if (options.poll_ms > 0) {
            watcher = make_poll_watcher(options.poll_ms);
        } else if (!net.empty()) {
            options.poll_ms = 1000;
            notice("the monitored folder is on " + net +
                   ", where inotify misses writes from other hosts: polling every 1000 ms (--poll-ms to change)");
            watcher = make_poll_watcher(options.poll_ms);
        } else {
            std::string why;
            watcher = make_inotify_watcher(why);
            if (!watcher) {
                options.poll_ms = 1000;
                notice(why + "; polling every 1000 ms instead");
                watcher = make_poll_watcher(options.poll_ms);
            }
        }
        watcher_ptr.store(watcher.get());
        committer =
            std::make_unique<BatchCommitter>(store, owner.counters_, owner.on_commit, owner.on_notice, 3, &stopping);
        detectors->set_wait_committed([this] { committer->wait_committed(); });

        for (const auto& r : options.roots) real_roots.push_back(canonical(r));
        for (const auto& r : options.roots) add_root(r);
        for (const auto& [path, _] : dirs)
            if (std::find(real_roots.begin(), real_roots.end(), path) != real_roots.end()) root_dirs.push_back(path);
        // Files known from an earlier session are checked too: they may have grown while msmon was away.
        for (auto& [_, f] : files) mark_dirty(*f);
        batch_limit = std::min<std::size_t>(8192, options.batch_rows);

        std::vector<PathChange> changes;
        while (!stopping.load()) {
            drain_dirty();
            if (!options.follow && dirty.empty() && !wholes->next_retry()) break;
            if (options.follow) {
                detectors->on_idle(Clock::now(), batch);
                retry_unreadable();
                retry_missing_roots();
            }
            flush();
            if (!caught_up.load() && dirty.empty()) {
                // Everything there was when run() began is read; once it is committed, what comes next is live.
                committer->wait_committed();
                caught_up.store(true);
                if (owner.on_caught_up) owner.on_caught_up();
            }
            if (options.follow && caught_up.load() && dirty.empty()) {
                committer->wait_committed();
                {  // an incident is announced once its origin can no longer move (NewIncidents)
                    std::lock_guard lock(progress_mu);
                    progress = detectors->read_progress(watcher->seen_until());
                }
                if (owner.on_quiet) owner.on_quiet(watcher->seen_until(), detectors->next_due());
            }
            changes.clear();
            bool rescan = false;
            watcher->wait(wait_ms(), changes, rescan);
            handle_changes(changes, rescan);
            if (refused(error)) return false;
        }
        flush();  // the last rows are observed first: finish() judges groups that are now complete
        detectors->finish(batch);
        flush();
        committer->finish(false);
        if (const std::size_t dropped = committer->dropped_on_stop())
            notice("stopped while the store could not commit (" + std::to_string(dropped) +
                   " batches not stored): what was committed stays; their files are read again from there next time");
        return !refused(error);
    }
};

IngestEngine::IngestEngine(IngestStore& store, IngestOptions options)
    : impl_(std::make_unique<Impl>(*this, store, std::move(options))) {}

IngestEngine::~IngestEngine() = default;

bool IngestEngine::run(std::string& error) {
    return impl_->run(error);
}

void IngestEngine::stop() {
    impl_->stopping.store(true);
    if (ChangeWatcher* w = impl_->watcher_ptr.load()) w->wake();
}

bool IngestEngine::caught_up() const {
    return impl_->caught_up.load();
}

std::optional<ReadProgress> IngestEngine::read_progress() const {
    std::lock_guard lock(impl_->progress_mu);
    return impl_->progress;
}

const char* IngestEngine::watch_mode() const {
    ChangeWatcher* w = impl_->watcher_ptr.load();
    return w ? w->mode() : "none";
}

std::size_t IngestEngine::rank_count() const {
    const KeyRegistry* keys = impl_->keys_ptr.load();
    return keys ? keys->rank_count() : 0;
}

}  // namespace msmon
