// The samples: a tensor's rows in chunks, not one SQLite row per (tensor, step).
//
// Table sample_chunk(id, tensor_id, block, first_step, last_step, n, data), unique on (tensor_id, block,
// first_step, last_step): a chunk holds n rows of one tensor, ascending steps, all inside one block of 64 step
// numbers (block = step >> 6). Each (tensor, step) is in at most one chunk. A bulk commit writes one chunk per tensor
// and block (a few thousand b-tree entries for the ~600k-row reference run instead of 600k); a live commit of
// one step appends a one-row chunk (no read-modify-write); when a tensor's rows move on to a later block, the
// chunks of the block it left are merged into one (the "seal"), so a long run ends with one chunk per 64 steps.
// Chunks of one block may interleave in steps (rows arriving out of order); readers merge them by step. Rows
// written behind a tensor's last step into steps no stored chunk spans (a backlog read newest first, its history
// after) are a chunk of their own too, with no read-modify-write; their blocks are sealed as they move on.
//
// Chunk bytes, per row: varint zigzag(step - previous step), a head byte (low 4 bits: value count; bits 4–6:
// layout, shape, dtype id differ from the previous row's), those ids as zigzag varints, then 2-bit tags per value
// (0 NaN, 1 whole number as a zigzag varint, 2 the 8 IEEE bytes) packed 4 to a byte, then the values.
// Head bit 7: the row came from a full-precision source (SampleRow::precedence 1); stores before version 8 never
// set it.
// Whole numbers (counts of NaNs and zeros, integer-valued stats) cost 1–3 bytes; -0.0 and ±inf keep their bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/model/record_batch.hpp"
#include "store/sqlite_handle.hpp"

namespace msmon {

inline constexpr int kSampleBlockShift = 6;
std::int64_t sample_block_of(std::int64_t step);

// `rows` ascending by step, steps unique. Values beyond a row's value_count are not stored (they read as NaN).
std::string encode_chunk(const SampleRow* const* rows, std::size_t n);
// Appends the chunk's rows (tensor_id set to `tensor_id`; slots beyond value_count NaN). Throws SqliteError if
// the bytes are not a chunk this code wrote.
void decode_chunk(const void* data, std::size_t bytes, std::int64_t tensor_id, std::vector<SampleRow>& out);

// Reads one tensor's rows. The caller holds the read transaction.
class SampleChunkReader {
public:
    explicit SampleChunkReader(Connection& conn);
    // Rows with lo <= step <= hi, ascending by step (replaces `out`).
    void read(std::int64_t tensor_id, std::int64_t lo, std::int64_t hi, std::vector<SampleRow>& out);
    std::optional<std::int64_t> last_step(std::int64_t tensor_id);
    // The `limit` highest steps, descending (replaces `out`).
    void recent_steps(std::int64_t tensor_id, std::size_t limit, std::vector<std::int64_t>& out);

private:
    Statement range_, last_, descending_;
    std::vector<SampleRow> block_;
};

// Writes a commit's rows inside the caller's transaction.
class SampleChunkWriter {
public:
    explicit SampleChunkWriter(Connection& conn);
    // `rows` visited in `order`: by (tensor, step), stable, so of a repeated (tensor, step) the last write comes
    // last and wins, unless what it meets has a higher precedence (SampleRow::precedence), which stays.
    // `replaced` is called for each row that meets a stored value (or one earlier in `rows`), kept or not.
    void write(const std::vector<SampleRow>& rows, const std::vector<std::uint32_t>& order,
               const std::function<void(const SampleRow&)>& replaced);
    // The transaction failed: forget what was learned about the stored chunks.
    void clear();

private:
    struct TensorState {
        std::int64_t last_step = 0;
        std::int64_t last_block = 0;
        int chunks_in_last_block = 0;  // 0: the tensor has no rows yet
        // Rows written behind last_step into steps no chunk holds (a backlog's history, read after its newest
        // steps): the block they last went to and its chunks written so, sealed as they move on.
        std::int64_t behind_block = -1;
        int behind_chunks = 0;
        // The tensor had no rows in the store when this writer first wrote it, and no merge of new rows or of its
        // newest block happened since: what is stored of it is rows appended from `appended_from` on and rows
        // written behind, all at or before `behind_through`. Rows strictly between the two meet no stored chunk's
        // span: no query (a backlog's history, written behind each tensor's newest step).
        bool fresh = false;
        std::int64_t appended_from = 0;
        std::int64_t behind_through = std::numeric_limits<std::int64_t>::min();
    };
    // Whether a stored chunk of (tensor, block) spans any step of [lo, hi].
    bool overlaps(std::int64_t tensor_id, std::int64_t block, std::int64_t lo, std::int64_t hi);
    TensorState& state(std::int64_t tensor_id);
    void write_block(std::int64_t tensor_id, std::int64_t block, std::vector<const SampleRow*>& rows,
                     const std::function<void(const SampleRow&)>& replaced);
    void merge_block(std::int64_t tensor_id, std::int64_t block, const std::vector<const SampleRow*>& fresh,
                     const std::function<void(const SampleRow&)>* replaced);
    void insert(std::int64_t tensor_id, std::int64_t block, const std::vector<const SampleRow*>& rows);

    static constexpr std::size_t kMaxCachedTensors = 1 << 20;

    Statement state_q_, block_q_, erase_, insert_, overlap_q_;
    std::unordered_map<std::int64_t, TensorState> tensors_;
    std::vector<const SampleRow*> run_;
    std::vector<SampleRow> stored_;
};

}  // namespace msmon
