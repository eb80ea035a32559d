// rank_block maintenance: deltas per (kind, op, rank, step) in memory, merged block by block at commit.
#include "store/rank_step_blocks.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "core/layout/run_segments.hpp"
#include "store/sample_chunks.hpp"
#include "store/schema.hpp"

namespace msmon {

std::int64_t block_of(std::int64_t step) {
    return step >> kBlockShift;
}  // arithmetic shift: floor for negatives

StepAggregate decode_entry(const void* data) {
    const auto* p = static_cast<const unsigned char*>(data);
    StepAggregate e;
    std::memcpy(&e.step, p, 8);
    std::memcpy(&e.acc, p + 8, 8);
    std::memcpy(&e.n, p + 16, 4);
    std::memcpy(&e.nans, p + 20, 4);
    return e;
}

std::vector<StepAggregate> decode_block(const void* data, std::size_t bytes) {
    std::vector<StepAggregate> out(bytes / kBlockEntryBytes);
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = decode_entry(p + i * kBlockEntryBytes);
    return out;
}

std::string encode_block(const std::vector<StepAggregate>& entries) {
    std::string out(entries.size() * kBlockEntryBytes, '\0');
    char* p = out.data();
    for (const auto& e : entries) {
        std::memcpy(p, &e.step, 8);
        std::memcpy(p + 8, &e.acc, 8);
        std::memcpy(p + 16, &e.n, 4);
        std::memcpy(p + 20, &e.nans, 4);
        p += kBlockEntryBytes;
    }
    return out;
}

std::size_t RankStepBlockWriter::KeyHash::operator()(const Key& k) const noexcept {
    std::uint64_t h = static_cast<std::uint64_t>(k.step) * 0x9e3779b97f4a7c15ULL;
    h ^= (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.rank)) << 20) ^
         (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.kind)) << 8) ^ static_cast<std::uint32_t>(k.op);
    return static_cast<std::size_t>(h ^ (h >> 29));
}

RankStepBlockWriter::RankStepBlockWriter(Connection& conn, bool by_runs)
    : conn_(conn),
      read_(conn, "SELECT data FROM rank_block WHERE kind = ? AND op = ? AND block = ? AND rank = ?"),
      write_(conn, "INSERT OR REPLACE INTO rank_block(kind, op, block, rank, data) VALUES(?,?,?,?,?)"),
      erase_(conn, "DELETE FROM rank_block WHERE kind = ? AND op = ? AND block = ? AND rank = ?"),
      range_(conn,
             "INSERT INTO kind_range(kind, min_step, max_step) VALUES(?1, ?2, ?3) ON CONFLICT(kind) DO UPDATE SET "
             "min_step = min(min_step, excluded.min_step), max_step = max(max_step, excluded.max_step)"),
      tensor_q_(conn,
                "SELECT t.kind, r.rank, r.format, t.run_id FROM tensor t JOIN run r ON r.id = t.run_id WHERE t.id = ?"),
      layout_q_(conn, "SELECT ops FROM layout WHERE id = ?"),
      by_runs_(by_runs) {}

int RankStepBlockWriter::intern(std::vector<std::string>& names, std::unordered_map<std::string, int>& ids,
                                const std::string& name) {
    auto [it, fresh] = ids.try_emplace(name, static_cast<int>(names.size()));
    if (fresh) {
        names.push_back(name);
        if (&names == &ops_) rules_.push_back(aggregate_rule(name));
    }
    return it->second;
}

const RankStepBlockWriter::TensorKey& RankStepBlockWriter::tensor(std::int64_t id) {
    auto it = tensors_.find(id);
    if (it != tensors_.end()) return it->second;
    tensor_q_.reset();
    tensor_q_.bind(1, id);
    if (!tensor_q_.step())
        throw SqliteError("rank_block: tensor " + std::to_string(id) + " is not stored", SQLITE_ERROR);
    const std::string kind = tensor_q_.text(0);
    TensorKey k{intern(kinds_, kind_ids_, kind), static_cast<int>(tensor_q_.int64(1)),
                intern(formats_, format_ids_, tensor_q_.text(2)), tensor_q_.int64(3), kind.ends_with("_vs_samples")};
    tensor_q_.reset();
    return tensors_.emplace(id, k).first->second;
}

const std::vector<int>& RankStepBlockWriter::layout(std::int64_t id) {
    auto it = layouts_.find(id);
    if (it != layouts_.end()) return it->second;
    layout_q_.reset();
    layout_q_.bind(1, id);
    if (!layout_q_.step())
        throw SqliteError("rank_block: layout " + std::to_string(id) + " is not stored", SQLITE_ERROR);
    const std::string ops = layout_q_.text(0);
    layout_q_.reset();
    std::vector<int> numeric;
    for (std::size_t start = 0; start <= ops.size();) {
        auto comma = ops.find(',', start);
        const std::string op = ops.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (op != "shape" && op != "dtype") numeric.push_back(intern(ops_, op_ids_, op));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return layouts_.emplace(id, std::move(numeric)).first->second;
}

RankStepBlockWriter::Delta& RankStepBlockWriter::delta(int kind, int op, int rank, std::int64_t step) {
    Delta& d = deltas_[Key{kind, op, rank, step}];
    d.agg.step = step;
    return d;
}

namespace {

std::int64_t span_key(int rank, int format) {
    return (static_cast<std::int64_t>(rank) << 16) | format;
}

}  // namespace

void RankStepBlockWriter::load_spans() {
    spans_.clear();
    spans_loaded_ = true;
    Statement q(conn_,
                "SELECT r.rank, r.format, g.run_id, g.first_step, g.last_step FROM run_range g JOIN run r ON r.id = "
                "g.run_id");
    while (q.step())
        spans_[span_key(static_cast<int>(q.int64(0)), intern(formats_, format_ids_, q.text(1)))].push_back(
            Span{q.int64(2), q.int64(3), q.int64(4), false});
}

bool RankStepBlockWriter::contended(const TensorKey& t, std::int64_t step) {
    if (!spans_loaded_) load_spans();
    std::vector<Span>& spans = spans_[span_key(t.rank, t.format)];
    bool other = false;
    Span* own = nullptr;
    for (Span& s : spans) {
        if (s.run == t.run) own = &s;
        else if (s.first <= step && step <= s.last) other = true;
    }
    if (!own) {
        spans.push_back(Span{t.run, step, step, true});
    } else if (step < own->first || step > own->last) {
        own->first = std::min(own->first, step);
        own->last = std::max(own->last, step);
        own->dirty = true;
    }
    return other;
}

void RankStepBlockWriter::write_spans() {
    for (auto& [_, spans] : spans_)
        for (Span& s : spans) {
            if (!s.dirty) continue;
            if (!span_write_)
                span_write_ = std::make_unique<Statement>(
                    conn_,
                    "INSERT INTO run_range(run_id, first_step, last_step) VALUES(?1, ?2, ?3) ON CONFLICT(run_id) DO "
                    "UPDATE SET first_step = min(first_step, excluded.first_step), last_step = max(last_step, "
                    "excluded.last_step)");
            span_write_->reset();
            span_write_->bind(1, s.run);
            span_write_->bind(2, s.first);
            span_write_->bind(3, s.last);
            span_write_->run();
            s.dirty = false;
        }
}

void RankStepBlockWriter::rebuild_step(const std::string& kind, int rank, std::int64_t step) {
    const Key k{intern(kinds_, kind_ids_, kind), -1, rank, step};
    if (rebuilt_.insert(k).second) to_recompute_.push_back(k);
}

void RankStepBlockWriter::add(const SampleRow& row) {
    // Bounded memory: merging is additive, so a commit may write its deltas in several rounds (a batch of many
    // tiny files, one step each, would otherwise hold a delta per value).
    if (deltas_.size() >= kMaxDeltas) flush();
    const TensorKey& t = tensor(row.tensor_id);
    const std::vector<int>& ops = layout(row.layout_id);
    const Key step_key{t.kind, -1, t.rank, row.step};
    // A step two runs hold (a restart trained it again): rebuilt at flush from the run that counts.
    if (by_runs_ && !t.samples_axis && !(step_key == last_ && t.run == last_run_) && contended(t, row.step)) {
        if (rebuilt_.insert(step_key).second) to_recompute_.push_back(step_key);
    }
    if (!rebuilt_.empty() && rebuilt_.count(step_key)) return;  // rebuilt whole from the samples at flush
    if (!(step_key == last_ && t.run == last_run_)) {
        last_ = step_key;
        last_run_ = t.run;
        std::fill(last_ops_.begin(), last_ops_.end(), nullptr);
    }
    if (last_ops_.size() < ops_.size()) last_ops_.resize(ops_.size(), nullptr);
    const int count = std::min<int>(row.value_count, static_cast<int>(ops.size()));
    for (int k = 0; k < count; ++k) {
        const int op = ops[static_cast<std::size_t>(k)];
        Delta*& d = last_ops_[static_cast<std::size_t>(op)];
        if (!d) d = &delta(t.kind, op, t.rank, row.step);
        add_value(rules_[static_cast<std::size_t>(op)], d->agg, row.values[k]);
    }
}

void RankStepBlockWriter::rebuild(const SampleRow& row) {
    const TensorKey& t = tensor(row.tensor_id);
    const Key k{t.kind, -1, t.rank, row.step};
    if (rebuilt_.insert(k).second) to_recompute_.push_back(k);
}

void RankStepBlockWriter::recompute(const Key& sk) {
    // Drop what was collected for this step and take the stored samples' word for it.
    for (std::size_t op = 0; op < ops_.size(); ++op)
        deltas_.erase(Key{sk.kind, static_cast<int>(op), sk.rank, sk.step});
    // Prepared on first use: a migration from a store older than sample_chunk aggregates without it.
    if (!rows_of_step_)
        rows_of_step_ = std::make_unique<Statement>(
            conn_,
            "SELECT s.tensor_id, s.data, r.id, r.time_label FROM tensor t JOIN run r ON r.id = t.run_id JOIN "
            "sample_chunk s ON s.tensor_id = t.id AND s.block = ?4 AND s.first_step <= ?3 AND s.last_step >= ?3 WHERE "
            "t.kind = ?1 AND r.rank = ?2");
    Statement& rows_of_step = *rows_of_step_;
    rows_of_step.reset();
    rows_of_step.bind(1, std::string_view(kinds_[static_cast<std::size_t>(sk.kind)]));
    rows_of_step.bind(2, sk.rank);
    rows_of_step.bind(3, sk.step);
    rows_of_step.bind(4, sample_block_of(sk.step));
    std::vector<std::int64_t> layout_ids;
    std::vector<std::vector<double>> values;
    std::vector<std::pair<std::int64_t, std::int64_t>> orders;  // each row's run order
    std::vector<SampleRow> chunk;
    while (rows_of_step.step()) {
        chunk.clear();
        decode_chunk(sqlite3_column_blob(rows_of_step.raw(), 1),
                     static_cast<std::size_t>(sqlite3_column_bytes(rows_of_step.raw(), 1)), rows_of_step.int64(0),
                     chunk);
        const auto order = run_order(by_runs_ ? rows_of_step.text(3) : std::string(), rows_of_step.int64(2));
        for (const SampleRow& r : chunk) {
            if (r.step != sk.step) continue;
            layout_ids.push_back(r.layout_id);
            values.emplace_back(r.values, r.values + kValueColumns);
            orders.push_back(order);
        }
    }
    rows_of_step.reset();
    // Only the latest run that holds the step counts (a restart's); one run: all of them.
    const auto latest =
        orders.empty() ? std::pair<std::int64_t, std::int64_t>{} : *std::max_element(orders.begin(), orders.end());
    for (std::size_t i = 0; i < layout_ids.size(); ++i) {
        if (by_runs_ && orders[i] != latest) continue;
        const std::vector<int>& ops = layout(layout_ids[i]);
        for (std::size_t k = 0; k < ops.size() && k < static_cast<std::size_t>(kValueColumns); ++k) {
            Delta& d = delta(sk.kind, ops[k], sk.rank, sk.step);
            d.replace = true;
            add_value(rules_[static_cast<std::size_t>(ops[k])], d.agg, values[i][k]);
        }
    }
    // An op no row has any more still replaces (with nothing, which removes the step): mark every op known.
    for (std::size_t op = 0; op < ops_.size(); ++op) {
        Delta& d = delta(sk.kind, static_cast<int>(op), sk.rank, sk.step);
        d.replace = true;
    }
}

void RankStepBlockWriter::flush() {
    last_ = Key{-1, -1, -1, 0};
    std::fill(last_ops_.begin(), last_ops_.end(), nullptr);
    for (const Key& k : to_recompute_) recompute(k);
    to_recompute_.clear();
    if (by_runs_) write_spans();
    // Group by block row, in key order (kind, op, block, rank) so the b-tree is written in order.
    std::map<std::tuple<int, int, std::int64_t, int>, std::vector<const Delta*>> groups;
    std::map<int, std::pair<std::int64_t, std::int64_t>> ranges;  // kind → steps seen in this commit
    for (const auto& [k, d] : deltas_) {
        groups[{k.kind, k.op, block_of(k.step), k.rank}].push_back(&d);
        auto [it, fresh] = ranges.try_emplace(k.kind, k.step, k.step);
        it->second.first = std::min(it->second.first, k.step);
        it->second.second = std::max(it->second.second, k.step);
    }
    for (const auto& [kind, range] : ranges) {
        range_.reset();
        range_.bind(1, std::string_view(kinds_[static_cast<std::size_t>(kind)]));
        range_.bind(2, range.first);
        range_.bind(3, range.second);
        range_.run();
    }
    for (auto& [g, ds] : groups) {
        const auto& [kind, op, block, rank] = g;
        const std::string& kind_name = kinds_[static_cast<std::size_t>(kind)];
        const std::string& op_name = ops_[static_cast<std::size_t>(op)];
        read_.reset();
        read_.bind(1, std::string_view(kind_name));
        read_.bind(2, std::string_view(op_name));
        read_.bind(3, block);
        read_.bind(4, rank);
        std::vector<StepAggregate> entries;
        const bool existed = read_.step();
        if (existed)
            entries = decode_block(sqlite3_column_blob(read_.raw(), 0),
                                   static_cast<std::size_t>(sqlite3_column_bytes(read_.raw(), 0)));
        read_.reset();
        const AggregateRule rule = rules_[static_cast<std::size_t>(op)];
        for (const Delta* d : ds) {
            auto it = std::lower_bound(entries.begin(), entries.end(), d->agg.step,
                                       [](const StepAggregate& e, std::int64_t s) { return e.step < s; });
            if (it != entries.end() && it->step == d->agg.step) {
                if (d->replace) *it = d->agg;
                else combine(rule, *it, d->agg);
            } else if (d->agg.n > 0 || d->agg.nans > 0) {
                entries.insert(it, d->agg);
            }
        }
        entries.erase(std::remove_if(entries.begin(), entries.end(),
                                     [](const StepAggregate& e) { return e.n == 0 && e.nans == 0; }),
                      entries.end());
        if (entries.empty()) {
            if (existed) {
                erase_.reset();
                erase_.bind(1, std::string_view(kind_name));
                erase_.bind(2, std::string_view(op_name));
                erase_.bind(3, block);
                erase_.bind(4, rank);
                erase_.run();
            }
            continue;
        }
        const std::string blob = encode_block(entries);
        write_.reset();
        write_.bind(1, std::string_view(kind_name));
        write_.bind(2, std::string_view(op_name));
        write_.bind(3, block);
        write_.bind(4, rank);
        sqlite3_bind_blob(write_.raw(), 5, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
        write_.run();
    }
    deltas_.clear();
}

void RankStepBlockWriter::clear() {
    deltas_.clear();
    rebuilt_.clear();
    to_recompute_.clear();
    last_ = Key{-1, -1, -1, 0};
    std::fill(last_ops_.begin(), last_ops_.end(), nullptr);
}

}  // namespace msmon
