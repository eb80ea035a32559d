// The ingest engine's loop (read what changed, batch, commit; until stopped or, in one shot, read to the end) and
// IngestEngine's public face. Its parts are in ingest_engine_impl.hpp.
#include "core/ingest/ingest_engine.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "core/ingest/csv_consumer.hpp"
#include "core/ingest/event_file_consumer.hpp"
#include "core/ingest/folder_listing.hpp"
#include "core/ingest/ingest_engine_impl.hpp"
#include "core/ingest/log_consumer.hpp"

namespace msmon {

int IngestEngine::Impl::wait_ms() const {
    int ms = 250;
    if (auto due = wholes->next_retry()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*due - Clock::now()).count();
        ms = static_cast<int>(std::clamp<long long>(left, 0, 250));
    }
    return ms;
}

bool IngestEngine::Impl::refused(std::string& error) {
    error = committer->refused();
    if (error.empty()) return false;
    committer->finish(true);
    return true;
}

bool IngestEngine::Impl::run(std::string& error) {
    IngestSnapshot snap = store.load_snapshot();
    keys = std::make_unique<KeyRegistry>(store, snap);
    keys_ptr.store(keys.get());
    readers[static_cast<std::size_t>(ReaderId::csv)] = std::make_unique<CsvConsumer>(*keys);
    readers[static_cast<std::size_t>(ReaderId::log)] = std::make_unique<LogConsumer>(*keys);
    readers[static_cast<std::size_t>(ReaderId::events)] =
        std::make_unique<EventFileConsumer>(*keys, options.read_chunk);
    auto whole = std::make_unique<WholeFileReader>(snap.whole_files, [this](const std::string& m) { notice(m); });
    wholes = whole.get();
    readers[static_cast<std::size_t>(ReaderId::whole)] = std::move(whole);
    detectors = std::make_unique<DetectorSet>(store, *keys, options.detectors, snap.settings, batch,
                                              [this](const std::string& m) { notice(m); });
    if (!detectors->ok(error)) return false;
    restore(snap);
    restore_marks(snap.settings);

    std::string net;
    std::vector<std::string> not_yet;  // following a folder the job has not made yet: it is waited for
    for (const auto& r : options.roots) {
        struct stat st {};
        if (options.follow && ::stat(r.c_str(), &st) != 0 && errno == ENOENT) {
            not_yet.push_back(r);
            continue;
        }
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
    committer = std::make_unique<BatchCommitter>(store, owner.counters_, owner.on_commit, owner.on_notice,
                                                 options.batches_waiting, &stopping);
    detectors->set_wait_committed([this] { committer->wait_committed(); });

    for (const auto& r : options.roots) real_roots.push_back(canonical(r));
    if (options.newest_first) {
        plan = std::make_unique<BackfillPlan>();
        planning = true;  // the first scan lists; the loop reads newest first (engine_backfill.cpp)
    }
    for (const auto& r : options.roots) {
        if (std::find(not_yet.begin(), not_yet.end(), r) == not_yet.end()) {
            add_root(r);
        } else {
            missing_roots.insert(r);
            missing_count.store(static_cast<int>(missing_roots.size()));
            not_yet_roots.insert(r);
            notice("'" + r + "' does not exist yet: waiting for it (looked for every second)");
        }
    }
    planning = false;
    if (plan) phase = BackfillPhase::window;
    for (const auto& [path, _] : dirs)
        if (std::find(real_roots.begin(), real_roots.end(), path) != real_roots.end()) root_dirs.push_back(path);
    // Files known from an earlier session are checked too: they may have grown while msmon was away.
    for (auto& [_, f] : files) mark_dirty(*f);
    batch_limit = std::min<std::size_t>(8192, options.batch_rows);

    std::vector<PathChange> changes;
    while (!stopping.load()) {
        feed_backfill();
        drain_dirty();
        publish_backfill();
        if (phase == BackfillPhase::done && !judge_from.empty() && dirty.empty()) judge_deferred();
        if (!options.follow && dirty.empty() && !backfilling() && !wholes->next_retry()) break;
        if (options.follow) {
            // Between the backlog's chunks nothing is judged idle: a held finding or a rank's pace waits for it.
            if (!backfilling()) detectors->on_idle(Clock::now(), batch);
            retry_unreadable();
            retry_missing_roots();
        }
        // While a backlog is read, its batch grows across chunks as one long read's would; live news goes out at once.
        if (!backfilling() || live_news) flush();
        live_news = false;
        if (!caught_up.load() && dirty.empty() && !backfilling()) {
            // Everything there was when run() began is read; once it is committed, what comes next is live.
            committer->wait_committed();
            {  // where reading stands is known before caught_up() says so (a reader takes both as "live")
                std::lock_guard lock(progress_mu);
                progress = detectors->read_progress(watcher->seen_until());
            }
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
        watcher->wait(backfilling() ? 0 : wait_ms(), changes, rescan);  // live news between backlog chunks
        handle_changes(changes, rescan);
        live_news = !changes.empty() || rescan;
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

int IngestEngine::roots_missing() const {
    return impl_->missing_count.load();
}

BackfillProgress IngestEngine::backfill() const {
    std::lock_guard lock(impl_->progress_mu);
    return impl_->committed_backfill();
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
