// Per-rank, per-step aggregates of every numeric op over all of a kind's tensors, kept by the writer in the
// same transaction as the rows: the Overview reads 4,096 ranks × 200 steps from a few thousand small rows
// instead of every raw value.
//
// Table kind_range(kind, min_step, max_step): the steps any row of the kind has had (the status line's range).
// Table rank_block(kind, op, block, rank, data): one row per 64 consecutive step numbers (block = step >> 6);
// data packs the block's steps in ascending order, kBlockEntryBytes each, native byte order:
//   int64 step, double acc, int32 n (values that are numbers), int32 nans (values that are NaN).
// acc combines by op: norm → sum of squares, max → max, min → min, anything else → sum (read as sum / n,
// except nans, read as the sum). A step with any NaN reads as NaN — the same rules as Reader::rank_series.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/model/record_batch.hpp"
#include "core/series/op_aggregate.hpp"
#include "store/sqlite_handle.hpp"

namespace msmon {

inline constexpr int kBlockShift = 6;
inline constexpr std::size_t kBlockEntryBytes = 24;

std::int64_t block_of(std::int64_t step);
// One entry at `p` (kBlockEntryBytes long), and a whole block.
StepAggregate decode_entry(const void* p);
std::vector<StepAggregate> decode_block(const void* data, std::size_t bytes);
std::string encode_block(const std::vector<StepAggregate>& entries);

// Collects one commit's deltas, then merges them into rank_block inside the caller's transaction. Kinds and ops
// are interned to small ids once (the store maps tensors and layouts to them), so a value costs no string work.
//
// Restarts (core/layout/run_segments.hpp): a step that two runs of a rank (and format) hold counts the later
// run's rows only. The writer keeps each run's step range (table run_range, which it maintains) and, when a row
// lands on a step another run of its rank holds, rebuilds that step from the winning run's stored samples.
class RankStepBlockWriter {
public:
    // `by_runs`: resolve restarts and keep run_range (false only for migrations older than that table).
    explicit RankStepBlockWriter(Connection& conn, bool by_runs = true);

    // One sample row (its tensor and layout must be in the tables already, this transaction's included).
    void add(const SampleRow& row);
    // The row replaced a stored one: its step's aggregates are rebuilt from the stored samples at flush.
    void rebuild(const SampleRow& row);
    // Writes and forgets everything collected.
    void flush();
    // Forgets everything collected (the transaction failed).
    void clear();
    // The commit before failed: the run ranges learned from it were not stored; read them again.
    void forget_uncommitted_runs() { spans_loaded_ = false; }
    // A step to take whole from the stored samples at flush (the migration that resolves old restarts).
    void rebuild_step(const std::string& kind, int rank, std::int64_t step);

private:
    struct Key {
        std::int32_t kind, op, rank;
        std::int64_t step;
        bool operator==(const Key&) const = default;
    };
    struct KeyHash {
        std::size_t operator()(const Key& k) const noexcept;
    };
    struct Delta {
        StepAggregate agg;
        bool replace = false;  // agg is the step's whole aggregate, not an increment
    };
    struct TensorKey {
        int kind, rank, format;
        std::int64_t run;
        bool samples_axis;  // TensorBoard's "<tag> vs samples" twin: its "steps" count samples, not in a run's span
    };
    // One run's steps so far (rows stored or in this commit); dirty: run_range has not been told.
    struct Span {
        std::int64_t run;
        std::int64_t first, last;
        bool dirty;
    };
    // Extends the row's run's span; true if another run of its rank and format holds the step.
    bool contended(const TensorKey& t, std::int64_t step);
    void load_spans();
    void write_spans();
    const TensorKey& tensor(std::int64_t id);
    const std::vector<int>& layout(std::int64_t id);  // op ids of the numeric slots
    int intern(std::vector<std::string>& names, std::unordered_map<std::string, int>& ids, const std::string& name);
    Delta& delta(int kind, int op, int rank, std::int64_t step);
    void recompute(const Key& step_key);

    static constexpr std::size_t kMaxDeltas = 65536;

    Connection& conn_;
    Statement read_, write_, erase_, range_, tensor_q_, layout_q_;
    std::unique_ptr<Statement> rows_of_step_, span_write_;
    bool by_runs_;
    bool spans_loaded_ = false;
    std::unordered_map<std::int64_t, std::vector<Span>> spans_;  // by (rank << 16 | format id)
    std::vector<std::string> formats_;
    std::unordered_map<std::string, int> format_ids_;
    std::unordered_map<std::int64_t, TensorKey> tensors_;
    std::unordered_map<std::int64_t, std::vector<int>> layouts_;
    std::vector<std::string> kinds_, ops_;
    std::unordered_map<std::string, int> kind_ids_, op_ids_;
    std::vector<AggregateRule> rules_;  // by op id
    std::unordered_map<Key, Delta, KeyHash> deltas_;
    // Steps (op unused) with a replaced value: their rows add nothing; flush() rebuilds them from the samples.
    std::unordered_set<Key, KeyHash> rebuilt_;
    std::vector<Key> to_recompute_;
    // The last (kind, rank, step) added and its deltas by op id: rows of one step arrive together.
    Key last_{-1, -1, -1, 0};
    std::int64_t last_run_ = -1;
    std::vector<Delta*> last_ops_;
};

}  // namespace msmon
