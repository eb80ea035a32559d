// The engine's followed files: added, marked, read through their format's reader (core/ingest/file_reader.hpp),
// batched and handed to the committer, and forgotten once read and committed.
#include <algorithm>
#include <cstdlib>
#include <limits>

#include "core/ingest/folder_listing.hpp"
#include "core/ingest/ingest_engine_impl.hpp"
#include "core/ingest/issue_cap.hpp"
#include "core/tail/file_tailer.hpp"
#include "core/text/csv_record.hpp"

namespace msmon {

IngestEngine::Impl::FileMap::iterator IngestEngine::Impl::add_file(TrackedFile f) {
    auto owned = std::make_unique<TrackedFile>(std::move(f));
    const std::string_view key = owned->progress.path;
    return files.emplace(key, std::move(owned)).first;
}

void IngestEngine::Impl::mark_dirty(TrackedFile& f) {
    if (f.dirty) return;
    f.dirty = true;
    dirty.push_back(&f);
}

TrackedFile IngestEngine::Impl::tracked_from_progress(FileProgress p) {
    TrackedFile f;
    const std::string name = basename_of(p.path);
    const RunInfo* run = keys->run(p.run_id);
    f.format = format_of_stored(p.kind, name);
    const FormatInfo& format = format_info(f.format);
    if (format.growth == Growth::whole) {
        const std::string parent = basename_of(dirname_of(p.path));
        f.rank = parent.rfind("rank", 0) == 0 ? std::atoi(parent.c_str() + 4) : 0;
    } else if (format.mindformers_run) {
        f.rank = run ? run->rank : 0;
    } else {
        f.role = f.format == FileFormat::csv_stack ? CsvRole::stack_info : CsvRole::data;
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

void IngestEngine::Impl::restore(const IngestSnapshot& snap) {
    for (const auto& p : snap.files) add_file(tracked_from_progress(p));
    owner.counters_.files.store(static_cast<std::uint64_t>(snap.file_count));
    next_file_id = snap.max_file_id + 1;
}

void IngestEngine::Impl::forget_if_done(TrackedFile& f) {
    if (!format_info(f.format).forgotten_when_read || f.dirty || f.in_batch || f.settling || f.skipping_long_line ||
        f.read_failed || !committed(f))
        return;
    files.erase(std::string_view(f.progress.path));
}

void IngestEngine::Impl::forget_settled() {
    while (!settling.empty() && committed(*settling.front())) {
        TrackedFile* f = settling.front();
        settling.pop_front();
        f->settling = false;
        forget_if_done(*f);
    }
}

void IngestEngine::Impl::note_in_batch(TrackedFile& f) {
    if (!f.in_batch) {
        f.in_batch = true;
        in_batch.push_back(&f);
    }
}

void IngestEngine::Impl::flush() {
    forget_settled();
    for (TrackedFile* f : in_batch) {
        batch.files.push_back(f->progress);
        f->in_batch = false;
        f->batch_seq = pushed_batches + 1;  // this batch: it holds a file, so it is pushed below
        if (format_info(f->format).forgotten_when_read && !f->settling) {
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
    observe_with_deferral();
    owner.counters_.cross_rank_peak_bytes.store(detectors->cross_rank_peak_bytes());
    ++pushed_batches;  // batches commit in push order: the n-th commit is this session's n-th batch
    committer->push(std::move(batch));
    batch = RecordBatch{};
    // Room for the next batch's rows at once: growing by doubling would hold the old rows and twice as many at the
    // moment of each copy (~20 MB at 100k rows, a spike at the peak of a long read). Pages not written to are not
    // resident (blocks this large are mapped: allocator_policy.hpp), so a small live batch costs nothing more.
    const std::size_t next = std::min(batch_limit * 2, options.batch_rows);
    batch.rows.reserve(next + next / 4);
}

void IngestEngine::Impl::read_file(TrackedFile& f) {
    if (leaves_roots(f.progress.path)) return;  // a file replaced by a link out of the tree since it was found
    const FormatInfo& format = format_info(f.format);
    if (format.rotates) follow_rotation(f);
    FileReader& reader = reader_of(f);
    if (format.growth == Growth::whole) {
        reader.read_whole(f, batch);
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
        ConsumeResult c = reader.consume(f, bytes, r.size, batch);
        if (c.consumed > 0) advance_progress(f.progress, bytes, c.consumed, c.lines);
        if (format.times_steps) note_step_times(f, rows_before, r.mtime_ms);
        if (c.consumed == 0 && bytes.size() >= options.read_chunk && format.line_records) {
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

void IngestEngine::Impl::note_step_times(const TrackedFile& f, std::size_t rows_before, std::int64_t mtime_ms) {
    if (batch.rows.size() == rows_before) return;
    const std::int64_t wall =
        caught_up.load()
            ? std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
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

void IngestEngine::Impl::drain_dirty() {
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

}  // namespace msmon
