// A backlog read newest first: the plan's files handed to reading in turn, the window's rows held back from the
// detectors, and judged from the store once the history is in (see ingest_engine_impl.hpp).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <unordered_map>

#include "core/detect/layout_ops.hpp"
#include "core/ingest/allocator_policy.hpp"
#include "core/ingest/ingest_engine_impl.hpp"

namespace msmon {

namespace {

// "last=N;kinds=a,b;runs=R:S,R:S" (empty: nothing deferred).
std::string encode_marks(const std::map<std::int64_t, std::int64_t>& from, const std::set<std::string>& kinds,
                         std::int64_t last) {
    if (from.empty()) return "";
    std::string s = "last=" + std::to_string(last) + ";kinds=";
    bool first = true;
    for (const auto& k : kinds) {
        s += (first ? "" : ",") + k;
        first = false;
    }
    s += ";runs=";
    first = true;
    for (const auto& [run, step] : from) {
        s += (first ? "" : ",") + std::to_string(run) + ":" + std::to_string(step);
        first = false;
    }
    return s;
}

std::optional<std::int64_t> to_int(std::string_view v) {
    std::int64_t n = 0;
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || p != v.data() + v.size()) return std::nullopt;
    return n;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    while (!s.empty()) {
        const auto at = s.find(sep);
        out.push_back(s.substr(0, at));
        if (at == std::string_view::npos) break;
        s.remove_prefix(at + 1);
    }
    return out;
}

}  // namespace

void IngestEngine::Impl::restore_marks(const std::vector<std::pair<std::string, std::string>>& settings) {
    for (const auto& [key, value] : settings) {
        if (key != kBackfillSetting) continue;
        for (const auto part : split(value, ';')) {
            const auto eq = part.find('=');
            if (eq == std::string_view::npos) continue;
            const auto name = part.substr(0, eq), v = part.substr(eq + 1);
            if (name == "last") deferred_last = to_int(v).value_or(-1);
            else if (name == "kinds")
                for (const auto k : split(v, ',')) deferred_kinds.insert(std::string(k));
            else if (name == "runs")
                for (const auto rs : split(v, ',')) {
                    const auto colon = rs.find(':');
                    if (colon == std::string_view::npos) continue;
                    const auto run = to_int(rs.substr(0, colon)), step = to_int(rs.substr(colon + 1));
                    if (run && step) judge_from[*run] = *step;
                }
        }
    }
    if (deferred_kinds.empty() || deferred_last < 0) judge_from.clear();  // unreadable: nothing to judge
}

bool IngestEngine::Impl::feed_backfill() {
    if (!plan || phase == BackfillPhase::done) return false;
    std::vector<BackfillPlan::Entry> next;
    switch (phase) {
        case BackfillPhase::window:
            next = plan->take_window();
            phase = BackfillPhase::others;
            window_reading = true;
            for (const auto& [dir, name] : next) on_entry(dir, name, false);
            drain_dirty();
            flush();  // the window's rows: each of their runs is marked from its first step read
            window_reading = false;
            break;
        case BackfillPhase::others:
            next = plan->take_others();
            phase = BackfillPhase::history;
            batch_limit = options.batch_rows;  // a batch is cut between parts (below), or when full
            for (const auto& [dir, name] : next) on_entry(dir, name, false);
            break;
        case BackfillPhase::history: {
            // Between two parts (the last one is read whole: reading drains what was taken), a batch may end.
            // Every folder's CSVs up to history_through are read: once that passes a block, its steps are observed
            // (a flush) and judged across ranks.
            if (part_done) {
                if (pushed_batches == part_batch && batch.rows.size() >= part_rows_from)
                    part_rows = batch.rows.size() - part_rows_from;
                const std::int64_t through = plan->progress().history_through;
                if (through >> BackfillPlan::kBlockShift > cross_rank_judged_through >> BackfillPlan::kBlockShift) {
                    flush();
                    detectors->judge_cross_rank_through(through, batch);
                    cross_rank_judged_through = through;
                } else if (!batch.rows.empty() && batch.rows.size() + part_rows > options.batch_rows) {
                    flush();
                }
                part_rows_from = batch.rows.size();
                part_batch = pushed_batches;
            }
            trim_free_memory();  // what the last chunk's batches freed, between the chunks
            next = plan->take_history(kBackfillChunk, &part_done);
            for (const auto& [dir, name] : next) on_entry(dir, name, false);
            if (plan->done()) phase = BackfillPhase::done;
            break;
        }
        case BackfillPhase::done:
            break;
    }
    backfill_fed = plan->progress();
    if (phase == BackfillPhase::done) {
        // Every file is handed to reading: the plan's listing (~130 bytes a file) goes before the judging.
        plan_final = *backfill_fed;
        plan.reset();
    }
    return true;
}

void IngestEngine::Impl::publish_backfill() {
    if (!backfill_fed) return;
    BackfillProgress p = *backfill_fed;
    backfill_fed.reset();
    p.active = backfilling();
    const std::uint64_t holding = pushed_batches + (batch.empty() ? 0 : 1);  // the batch with the last rows read
    std::lock_guard lock(progress_mu);
    backfill_at_commit.emplace_back(holding, p);
    committed_backfill();
}

const BackfillProgress& IngestEngine::Impl::committed_backfill() {
    const std::uint64_t committed = owner.counters_.batches.load();
    while (!backfill_at_commit.empty() && backfill_at_commit.front().first <= committed) {
        backfill_progress = backfill_at_commit.front().second;
        backfill_at_commit.pop_front();
    }
    return backfill_progress;
}

void IngestEngine::Impl::observe_with_deferral() {
    if (!window_reading && judge_from.empty()) {
        detectors->observe(batch);
        return;
    }
    // Which rows wait (at or past their run's mark): most batches of the history hold none, and go to the detectors
    // as they are. Outside the window, a batch with no row at or past the lowest mark holds none.
    if (!window_reading) {
        std::int64_t lowest = std::numeric_limits<std::int64_t>::max();
        for (const auto& [run, step] : judge_from) lowest = std::min(lowest, step);
        if (std::none_of(batch.rows.begin(), batch.rows.end(),
                         [lowest](const SampleRow& r) { return r.step >= lowest; })) {
            detectors->observe(batch);
            return;
        }
    }
    std::vector<char> waits(batch.rows.size(), 0);
    std::size_t waiting = 0;
    // The batch is sorted by tensor: a tensor's run, mark and kind are looked up once for its rows.
    std::int64_t looked_up = -1;
    const TensorInfo* t = nullptr;
    bool judged_always = true;  // not an msprobe run's row: never held
    auto mark = judge_from.end();
    for (std::size_t i = 0; i < batch.rows.size(); ++i) {
        const SampleRow& row = batch.rows[i];
        if (i == 0 || row.tensor_id != looked_up) {
            looked_up = row.tensor_id;
            t = keys->tensor(row.tensor_id);
            const RunInfo* run = t ? keys->run(t->run_id) : nullptr;
            judged_always = !t || !run || run->format == "mindformers";
            if (!judged_always) mark = judge_from.find(t->run_id);
        }
        if (judged_always) continue;
        if (window_reading && (mark == judge_from.end() || row.step < mark->second)) {
            mark = judge_from.insert_or_assign(t->run_id, row.step).first;
            marks_changed = true;
        }
        if (mark == judge_from.end() || row.step < mark->second) continue;
        if (!deferred_kinds.contains(t->kind)) {
            deferred_kinds.insert(t->kind);
            marks_changed = true;
        }
        if (row.step > deferred_last) {
            deferred_last = row.step;
            marks_changed = true;
        }
        waits[i] = 1;
        ++waiting;
    }
    if (marks_changed) {
        std::erase_if(batch.settings, [](const auto& kv) { return kv.first == kBackfillSetting; });
        batch.settings.emplace_back(kBackfillSetting, encode_marks(judge_from, deferred_kinds, deferred_last));
        marks_changed = false;
    }
    if (waiting == 0) {
        detectors->observe(batch);
        return;
    }
    // The judged rows kept in place, in order; the waiting ones aside (both stay sorted by tensor, then step).
    std::vector<SampleRow> held;
    held.reserve(waiting);
    std::size_t kept = 0;
    for (std::size_t i = 0; i < batch.rows.size(); ++i) {
        if (waits[i]) held.push_back(batch.rows[i]);
        else batch.rows[kept++] = batch.rows[i];
    }
    batch.rows.resize(kept);
    detectors->observe(batch);
    // Back into the batch for the store, in the writer's order (by tensor, then step; stable: judged rows first).
    batch.rows.insert(batch.rows.end(), held.begin(), held.end());
    std::inplace_merge(batch.rows.begin(), batch.rows.begin() + static_cast<std::ptrdiff_t>(kept), batch.rows.end(),
                       [](const SampleRow& a, const SampleRow& b) {
                           return a.tensor_id != b.tensor_id ? a.tensor_id < b.tensor_id : a.step < b.step;
                       });
}

void IngestEngine::Impl::judge_deferred() {
    flush();
    committer->wait_committed();  // every deferred row is in the store
    std::int64_t from = std::numeric_limits<std::int64_t>::max();
    for (const auto& [run, step] : judge_from) {
        from = std::min(from, step);
        keys->load_run_tensors(run);
    }
    const auto started = Clock::now();
    std::size_t judged = 0;
    std::unordered_map<std::int32_t, std::int32_t> value_counts;
    // A few steps at a time, fewer when they are many rows, and a kind at a time (a tensor is of one kind: its rows
    // stay in step order): memory holds about kRows rows. Each kind's rows are judged a slice at a time, as reading
    // hands batches over: a slice's detector states (~220 bytes a tensor) go to the store with it, not those of
    // every tensor of the job in one batch.
    constexpr std::size_t kRows = 1u << 16, kSliceRows = 8192;
    std::int64_t span = 1;
    for (std::int64_t a = from; a <= deferred_last && !stopping.load();) {
        const std::int64_t b = std::min(deferred_last, a + span - 1);
        std::size_t n = 0;
        for (const auto& kind : deferred_kinds) {
            std::vector<SampleRow> rows;
            store.visit_samples(kind, a, b, [&](StoredSample& s) {
                const auto mark = judge_from.find(s.run_id);
                if (mark == judge_from.end() || s.row.step < mark->second) return;
                auto [count, added] = value_counts.try_emplace(s.row.layout_id, 0);
                if (added)
                    if (const std::string* ops = keys->layout_ops(s.row.layout_id))
                        count->second =
                            static_cast<std::int32_t>(std::min<std::size_t>(numeric_ops(*ops).size(), kMaxNumericOps));
                s.row.value_count = count->second;
                rows.push_back(s.row);
            });
            std::stable_sort(rows.begin(), rows.end(), [](const SampleRow& x, const SampleRow& y) {
                return x.tensor_id != y.tensor_id ? x.tensor_id < y.tensor_id : x.step < y.step;
            });
            n += rows.size();
            for (std::size_t at = 0; at < rows.size(); at += kSliceRows) {
                RecordBatch slice;
                const auto first = rows.begin() + static_cast<std::ptrdiff_t>(at);
                slice.rows.assign(first, first + static_cast<std::ptrdiff_t>(std::min(kSliceRows, rows.size() - at)));
                detectors->observe(slice);
                // What judging found and learned goes to the store; the rows are there already.
                for (auto& x : slice.anomalies) batch.anomalies.push_back(std::move(x));
                for (auto& x : slice.detector_states) batch.detector_states.push_back(std::move(x));
                for (auto& kv : slice.settings) {
                    std::erase_if(batch.settings, [&](const auto& e) { return e.first == kv.first; });
                    batch.settings.push_back(std::move(kv));
                }
                flush();
            }
        }
        judged += n;
        const auto steps = static_cast<std::size_t>(b - a + 1);
        a = b + 1;
        const std::size_t per_step = std::max<std::size_t>(1, n / steps);
        span = static_cast<std::int64_t>(std::clamp<std::size_t>(kRows / per_step, 1, 64));
    }
    if (stopping.load()) return;  // the marks stay: the next session judges what is left
    spdlog::info("backlog: {} rows of the newest steps of {} runs judged after their history in {:.2f} s", judged,
                 judge_from.size(), std::chrono::duration<double>(Clock::now() - started).count());
    judge_from.clear();
    deferred_kinds.clear();
    deferred_last = -1;
    std::erase_if(batch.settings, [](const auto& kv) { return kv.first == kBackfillSetting; });
    batch.cleared_settings.emplace_back(kBackfillSetting);
    flush();
    backfill_fed = plan_final;
    publish_backfill();
}

}  // namespace msmon
