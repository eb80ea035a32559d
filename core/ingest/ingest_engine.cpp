// The ingest engine: which folders are rank runs, which files are followed, and the read → parse → batch loop.
#include "core/ingest/ingest_engine.hpp"

#include <dirent.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <deque>
#include <map>
#include <unordered_map>

#include "core/ingest/batch_committer.hpp"
#include "core/ingest/csv_consumer.hpp"
#include "core/ingest/key_registry.hpp"
#include "core/ingest/tracked_file.hpp"
#include "core/layout/monitor_layout.hpp"
#include "core/tail/file_tailer.hpp"
#include "core/text/csv_record.hpp"
#include "core/watch/change_watcher.hpp"

namespace msmon {

namespace {

enum class DirRole { root, run_v1, run_v2 };

struct TrackedDir {
    DirRole role = DirRole::root;
    std::int64_t run_id = 0;
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
    std::atomic<ChangeWatcher*> watcher_ptr{nullptr};
    std::unique_ptr<ChangeWatcher> watcher;
    std::vector<std::unique_ptr<ChangeWatcher>> retired;
    std::unique_ptr<KeyRegistry> keys;
    std::unique_ptr<CsvConsumer> consumer;
    std::unique_ptr<BatchCommitter> committer;
    std::map<std::string, TrackedDir> dirs;
    std::unordered_map<std::string, TrackedFile> files;
    std::deque<TrackedFile*> dirty;
    std::vector<TrackedFile*> in_batch;
    RecordBatch batch;
    std::int64_t next_file_id = 1;
    std::size_t batch_limit = 8192;  // rows in the batch being built before it is handed to the writer
    std::string bytes;

    void notice(const std::string& msg) {
        spdlog::warn("{}", msg);
        if (owner.on_notice) owner.on_notice(msg);
    }

    // ---- discovery -------------------------------------------------------------------------------

    bool has_csv_files(const std::string& dir, bool v2) {
        for (const auto& e : list_dir(dir))
            if (!e.dir && (v2 ? parse_v2_csv_name(e.name) : parse_v1_csv_name(e.name))) return true;
        return false;
    }

    void add_root(const std::string& given) {
        const std::string path = canonical(given);
        const std::string name = basename_of(path);
        if (auto run = parse_run_dir_name(name)) {
            track_run_dir(path, DirRole::run_v1, run->rank, run->time_label, run->uid);
        } else if (auto rank = parse_v2_rank_dir_name(name)) {
            // A rank_<r> folder given directly is that rank's folder, even before its first file appears.
            track_run_dir(path, DirRole::run_v2, *rank, "", "");
        } else if (has_csv_files(path, false)) {
            notice("'" + path + "' holds msprobe CSVs but its name has no rank (<time>-rank<N>-<uid>): read as rank 0");
            track_run_dir(path, DirRole::run_v1, 0, "", "");
        } else {
            track_dir(path, DirRole::root, 0);
        }
    }

    void track_run_dir(const std::string& path, DirRole role, int rank, const std::string& label,
                       const std::string& uid) {
        RunInfo proto;
        proto.rank = rank;
        proto.path = path;
        proto.time_label = label;
        proto.uid = uid;
        proto.format = role == DirRole::run_v2 ? "msprobe_v2" : "msprobe";
        track_dir(path, role, keys->run_id(proto, batch));
    }

    void track_dir(const std::string& path, DirRole role, std::int64_t run_id) {
        if (dirs.count(path)) return;
        dirs[path] = TrackedDir{role, run_id};
        std::string error;
        if (!watcher->add_dir(path, error)) {
            if (std::string(watcher->mode()) == "inotify") {
                switch_to_polling("cannot watch '" + path + "' (" + error + ")");
            } else {
                notice("cannot watch '" + path + "': " + error);
            }
        }
        scan_dir(path);
    }

    void switch_to_polling(const std::string& why) {
        const int ms = options.poll_ms > 0 ? options.poll_ms : 1000;
        notice(why + "; falling back to polling every " + std::to_string(ms) + " ms");
        retired.push_back(std::move(watcher));  // stop() may still hold the old pointer
        watcher = make_poll_watcher(ms);
        watcher_ptr.store(watcher.get());
        std::string ignored;
        for (const auto& [path, _] : dirs) watcher->add_dir(path, ignored);
        for (const auto& [path, _] : dirs) scan_dir(path);
    }

    void scan_dir(const std::string& path) {
        for (const auto& e : list_dir(path)) on_entry(path, e.name, e.dir);
    }

    // A new or changed entry in a tracked folder.
    void on_entry(const std::string& dir, const std::string& name, bool entry_is_dir) {
        auto it = dirs.find(dir);
        if (it == dirs.end()) return;
        const TrackedDir td = it->second;
        const std::string path = dir + "/" + name;
        if (entry_is_dir) {
            if (td.role != DirRole::root || dirs.count(path)) return;
            if (auto run = parse_run_dir_name(name)) {
                track_run_dir(path, DirRole::run_v1, run->rank, run->time_label, run->uid);
            } else if (auto rank = parse_v2_rank_dir_name(name)) {
                track_run_dir(path, DirRole::run_v2, *rank, "", "");
            } else if (name == "monitor_output") {
                track_dir(path, DirRole::root, 0);
            }
            return;
        }
        if (td.role == DirRole::root) return;
        auto fit = files.find(path);
        if (fit == files.end()) {
            auto parsed = td.role == DirRole::run_v2 ? parse_v2_csv_name(name) : parse_v1_csv_name(name);
            if (!parsed) return;
            TrackedFile f;
            f.progress.id = next_file_id++;
            f.progress.run_id = td.run_id;
            f.progress.path = path;
            f.progress.kind = parsed->kind;
            f.role = parsed->role;
            f.v2 = td.role == DirRole::run_v2;
            fit = files.emplace(path, std::move(f)).first;
            owner.counters_.files.fetch_add(1);
        }
        mark_dirty(fit->second);
    }

    void mark_dirty(TrackedFile& f) {
        if (f.dirty) return;
        f.dirty = true;
        dirty.push_back(&f);
    }

    void restore(const IngestSnapshot& snap) {
        for (const auto& p : snap.files) {
            TrackedFile f;
            f.progress = p;
            const std::string name = basename_of(p.path);
            f.role = name == "stack_info.csv" ? CsvRole::stack_info : CsvRole::data;
            for (const auto& r : snap.runs)
                if (r.id == p.run_id) f.v2 = r.format == "msprobe_v2";
            if (!p.header.empty() && f.role == CsvRole::data) {
                std::vector<std::string_view> fields;
                std::string scratch, error;
                if (split_csv_fields(p.header, fields, scratch)) {
                    f.schema = parse_csv_header(fields, error);
                    if (f.schema) f.layout_id = keys->layout_id(f.schema->layout, batch);
                }
                f.header_rejected = !f.schema;
            }
            files.emplace(p.path, std::move(f));
            owner.counters_.files.fetch_add(1);
        }
        next_file_id = snap.max_file_id + 1;
    }

    // ---- reading ---------------------------------------------------------------------------------

    void note_in_batch(TrackedFile& f) {
        if (!f.in_batch) {
            f.in_batch = true;
            in_batch.push_back(&f);
        }
    }

    void flush() {
        for (TrackedFile* f : in_batch) {
            batch.files.push_back(f->progress);
            f->in_batch = false;
        }
        in_batch.clear();
        if (batch.empty()) return;
        // Rows of one tensor together, steps ascending: inserts walk the b-tree in key order. Stable, so a
        // repeated (tensor, step) keeps its file order and the last write still wins.
        std::stable_sort(batch.rows.begin(), batch.rows.end(), [](const SampleRow& a, const SampleRow& b) {
            return a.tensor_id != b.tensor_id ? a.tensor_id < b.tensor_id : a.step < b.step;
        });
        committer->push(std::move(batch));
        batch = RecordBatch{};
    }

    void read_file(TrackedFile& f) {
        while (!stopping.load()) {
            TailRead r = tail_file(f.progress, bytes, options.read_chunk);
            if (r.restarted) {
                owner.counters_.restarts.fetch_add(1);
                notice("'" + f.progress.path + "' " + r.restart_reason + ": reading it again from the start; stored values are kept");
                f.schema.reset();
                f.header_rejected = false;
                f.skipping_long_line = false;
                note_in_batch(f);
            }
            if (r.status == TailStatus::error) {
                notice("cannot read '" + f.progress.path + "': " + r.error);
                return;
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
            ConsumeResult c = consumer->consume(f, bytes, batch);
            if (c.consumed > 0) advance_progress(f.progress, bytes, c.consumed, c.lines);
            if (c.consumed == 0 && bytes.size() >= options.read_chunk) {
                // A record longer than a whole read: report it and skip to its end, with bounded memory.
                ParseIssue p;
                p.file_id = f.progress.id;
                p.path = f.progress.path;
                p.line = f.progress.line + 1;
                p.reason = "line longer than " + std::to_string(options.read_chunk) + " bytes: skipped";
                spdlog::warn("{}:{}: {}", p.path, p.line, p.reason);
                batch.issues.push_back(std::move(p));
                f.skipping_long_line = true;
                advance_progress(f.progress, bytes, bytes.size(), 0);
                continue;
            }
            if (batch.rows.size() >= batch_limit) {
                flush();
                // Start small so the writer gets work early; grow to amortise commits in a long catch-up.
                batch_limit = std::min(batch_limit * 2, options.batch_rows);
            }
            if (!r.more) return;
        }
    }

    void drain_dirty() {
        while (!dirty.empty() && !stopping.load()) {
            TrackedFile* f = dirty.front();
            dirty.pop_front();
            f->dirty = false;
            read_file(*f);
        }
    }

    void handle_changes(const std::vector<PathChange>& changes, bool rescan) {
        if (rescan) {
            notice("file events were lost (inotify queue overflow): rescanning everything");
            std::vector<std::string> all;
            for (const auto& [path, _] : dirs) all.push_back(path);
            for (const auto& p : all) scan_dir(p);
            for (auto& [_, f] : files) mark_dirty(f);
        }
        for (const auto& c : changes) {
            if (c.name.empty()) {
                if (c.removed) {
                    watcher->remove_dir(c.dir);
                    dirs.erase(c.dir);
                    notice("folder '" + c.dir + "' was removed; its stored values are kept");
                }
                continue;
            }
            const std::string path = c.dir + "/" + c.name;
            if (c.removed) {
                if (c.is_dir && dirs.count(path)) {
                    watcher->remove_dir(path);
                    dirs.erase(path);
                }
                continue;
            }
            on_entry(c.dir, c.name, c.is_dir);
        }
    }

    bool run(std::string& error) {
        IngestSnapshot snap = store.load_snapshot();
        keys = std::make_unique<KeyRegistry>(store, snap);
        consumer = std::make_unique<CsvConsumer>(*keys);
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
            notice("the monitored folder is on " + net + ", where inotify misses writes from other hosts: polling every 1000 ms (--poll-ms to change)");
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
        committer = std::make_unique<BatchCommitter>(store, owner.counters_, owner.on_commit, owner.on_notice);

        for (const auto& r : options.roots) add_root(r);
        // Files known from an earlier session are checked too: they may have grown while msmon was away.
        for (auto& [_, f] : files) mark_dirty(f);
        batch_limit = std::min<std::size_t>(8192, options.batch_rows);

        std::vector<PathChange> changes;
        while (!stopping.load()) {
            drain_dirty();
            if (!options.follow && dirty.empty()) break;
            flush();
            changes.clear();
            bool rescan = false;
            watcher->wait(250, changes, rescan);
            handle_changes(changes, rescan);
        }
        flush();
        committer->finish(false);
        return true;
    }
};

IngestEngine::IngestEngine(IngestStore& store, IngestOptions options)
    : impl_(std::make_unique<Impl>(*this, store, std::move(options))) {}

IngestEngine::~IngestEngine() = default;

bool IngestEngine::run(std::string& error) { return impl_->run(error); }

void IngestEngine::stop() {
    impl_->stopping.store(true);
    if (ChangeWatcher* w = impl_->watcher_ptr.load()) w->wake();
}

const char* IngestEngine::watch_mode() const {
    ChangeWatcher* w = impl_->watcher_ptr.load();
    return w ? w->mode() : "none";
}

std::size_t IngestEngine::run_count() const { return impl_->keys ? impl_->keys->run_count() : 0; }

}  // namespace msmon
