// The ingest engine's view of the monitored tree: its roots (removed and back), links that leave it, folders found
// by their names (core/ingest/source_layout.hpp), watched, unreadable for a while, or lost to the watch limit; and
// each new entry, which a file's format (core/ingest/file_formats.hpp) makes a followed file.
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "core/ingest/folder_listing.hpp"
#include "core/ingest/ingest_engine_impl.hpp"
#include "core/tail/file_tailer.hpp"

namespace msmon {

void IngestEngine::Impl::notice(const std::string& msg) {
    spdlog::warn("{}", msg);
    if (owner.on_notice) owner.on_notice(msg);
}

void IngestEngine::Impl::root_removed(const std::string& root) {
    if (!missing_roots.insert(root).second) return;
    missing_count.store(static_cast<int>(missing_roots.size()));
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

void IngestEngine::Impl::retry_missing_roots() {
    if (missing_roots.empty() || Clock::now() - last_missing_check < std::chrono::seconds(1)) return;
    last_missing_check = Clock::now();
    for (auto it = missing_roots.begin(); it != missing_roots.end();) {
        if (!is_dir(*it)) {
            ++it;
            continue;
        }
        notice("the monitored folder '" + *it + (not_yet_roots.erase(*it) ? "' appeared" : "' is back") +
               ": reading it");
        const std::string root = *it;
        it = missing_roots.erase(it);
        missing_count.store(static_cast<int>(missing_roots.size()));
        add_root(root);
        // A root that did not exist when msmon started (or was given by a path through links made since): its
        // real path is known only now.
        const std::string real = canonical(root);
        if (std::find(real_roots.begin(), real_roots.end(), real) == real_roots.end()) real_roots.push_back(real);
        if (dirs.count(real) && std::find(root_dirs.begin(), root_dirs.end(), real) == root_dirs.end())
            root_dirs.push_back(real);
    }
}

bool IngestEngine::Impl::leaves_roots(const std::string& path) {
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

bool IngestEngine::Impl::has_v1_csv_files(const std::string& dir) {
    for (const auto& e : list_dir(dir))
        if (!e.dir && classify_file(DirRole::run_v1, 0, e.name)) return true;
    return false;
}

void IngestEngine::Impl::add_root(const std::string& given) {
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

void IngestEngine::Impl::track_dir(const std::string& path, const DirClass& c, const std::string& parent_output,
                                   int depth) {
    if (dirs.count(path)) return;
    TrackedDir td;
    td.depth = depth;
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

bool IngestEngine::Impl::watch_dir(const std::string& path) {
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

void IngestEngine::Impl::retry_unreadable() {
    if (unreadable.empty() || Clock::now() - last_unreadable_retry < kUnreadableRetry) return;
    last_unreadable_retry = Clock::now();
    const std::vector<std::string> again(unreadable.begin(), unreadable.end());
    for (const auto& path : again)
        if (dirs.count(path) && watch_dir(path)) scan_dir(path);
    for (auto& [_, f] : files)
        if (f->read_failed) mark_dirty(*f);
}

void IngestEngine::Impl::switch_to_polling(const std::string& why) {
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

void IngestEngine::Impl::scan_dir(const std::string& path) {
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
    if (planning) {  // the first scan: listed, read later in the plan's order (engine_backfill.cpp)
        std::vector<PlannedFile> listed;
        for (const auto& [_, name] : file_order) {
            const auto fc = classify_file(it->second.role, it->second.rank, name);
            const bool csv = fc->format == FileFormat::csv_data && fc->csv_role == CsvRole::data;
            listed.push_back({fc->order, name, csv, csv ? fc->kind : std::string(), fc->last_step,
                              format_info(fc->format).settings_first});
        }
        for (const auto& e : entries)
            if (e.dir) on_entry(path, e.name, true);
        plan->add_folder(path, std::move(listed));  // after its subfolders', as they were read before
        return;
    }
    for (const auto& e : entries)
        if (e.dir) on_entry(path, e.name, true);
    for (const auto& [_, name] : file_order) on_entry(path, name, false);
}

std::int64_t IngestEngine::Impl::msprobe_run_id(const std::string& path, const TrackedDir& td) {
    RunInfo proto;
    proto.rank = td.rank;
    proto.path = path;
    proto.time_label = td.time_label;
    proto.uid = td.uid;
    proto.format = td.role == DirRole::run_v2 ? "msprobe_v2" : "msprobe";
    return keys->run_id(proto, batch);
}

std::int64_t IngestEngine::Impl::log_run_id(const TrackedDir& td, int rank) {
    RunInfo proto;
    proto.rank = rank;
    proto.path = td.mf_output + "#mindformers#rank" + std::to_string(rank);
    proto.format = "mindformers";
    return keys->run_id(proto, batch);
}

void IngestEngine::Impl::on_entry(const std::string& dir, const std::string& name, bool entry_is_dir) {
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
            track_dir(path, *c, name == "output" ? path : td.mf_output, td.depth + 1);
        } else if (const auto why = unreadable_rank_dir(td.role, name); why && refused_dirs.insert(path).second) {
            notice("'" + path + "' is " + *why);
        } else if (td.role == DirRole::root && td.depth < kSearchDepth && name[0] != '.' && !leaves_roots(path) &&
                   ::access(path.c_str(), R_OK | X_OK) == 0) {
            // A folder of another name: looked into as a root is (see kSearchDepth). One msmon may not read is
            // passed by without a word: nothing says it holds anything of the job's.
            if (++searched_folders == kMaxSearchedFolders + 1)
                notice("more than " + std::to_string(kMaxSearchedFolders) + " folders of unknown names under the " +
                       "monitored folder: no more are looked into (name the output folders to read them)");
            if (searched_folders <= kMaxSearchedFolders)
                track_dir(path, DirClass{DirRole::root, 0, "", ""}, path, td.depth + 1);  // as output/ is
        }
        return;
    }
    auto fit = files.find(path);
    if (fit == files.end()) {
        auto fc = classify_file(td.role, td.rank, name);
        if (!fc || leaves_roots(path)) return;
        const FormatInfo& format = format_info(fc->format);
        if (format.forgotten_when_read) {
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
        if (format.rotates && !claim_progress(dir, path, is_rotated_name(name), rotated))
            return;  // shorter than what identifies a copy: look again when it grows
        TrackedFile f;
        f.progress.id = next_file_id++;
        f.progress.path = path;
        f.progress.kind = fc->kind;
        f.format = fc->format;
        f.role = fc->csv_role;
        f.v2 = fc->v2;
        f.rank = fc->rank;
        // Event files join the MindFormers run of their rank: a metric both write is one series.
        if (!format.mindformers_run && td.run_id == 0 && (td.role == DirRole::run_v1 || td.role == DirRole::run_v2))
            it->second.run_id = msprobe_run_id(dir, td);
        f.progress.run_id = format.mindformers_run ? log_run_id(td, fc->rank) : it->second.run_id;
        if (!format.stored_kind.empty()) f.progress.kind = std::string(format.stored_kind);
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

void IngestEngine::Impl::handle_changes(const std::vector<PathChange>& changes, bool rescan) {
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

}  // namespace msmon
