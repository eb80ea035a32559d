// Sample chunks: the codec, the reader and the writer (see sample_chunks.hpp for the layout).
#include "store/sample_chunks.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace msmon {

namespace {

enum Tag : unsigned { kNaN = 0, kWhole = 1, kBytes = 2 };
constexpr unsigned kLayoutChanged = 0x10, kShapeChanged = 0x20, kDtypeChanged = 0x40, kFullPrecisionRow = 0x80;

std::uint64_t zigzag(std::int64_t v) {
    return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
std::int64_t unzigzag(std::uint64_t v) {
    return static_cast<std::int64_t>((v >> 1) ^ (~(v & 1) + 1));
}

void put_varint(std::string& out, std::uint64_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<char>((v & 0x7f) | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<char>(v));
}

// A whole number a varint keeps exactly (|v| < 2^53), and not -0.0 (its sign would be lost).
bool is_whole(double v, std::int64_t& out) {
    if (!(std::fabs(v) < 9007199254740992.0)) return false;
    const double t = std::trunc(v);
    if (t != v || (v == 0 && std::signbit(v))) return false;
    out = static_cast<std::int64_t>(t);
    return true;
}

[[noreturn]] void corrupt(std::int64_t tensor_id) {
    throw SqliteError("sample chunk of tensor " + std::to_string(tensor_id) + " is corrupt", SQLITE_CORRUPT);
}

struct ByteReader {
    const unsigned char* p;
    const unsigned char* end;
    std::int64_t tensor_id;

    std::uint64_t varint() {
        std::uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (p == end) corrupt(tensor_id);
            const unsigned char b = *p++;
            v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
            if (!(b & 0x80)) return v;
        }
        corrupt(tensor_id);
    }
    unsigned char byte() {
        if (p == end) corrupt(tensor_id);
        return *p++;
    }
    double raw_double() {
        if (end - p < 8) corrupt(tensor_id);
        double v;
        std::memcpy(&v, p, sizeof v);
        p += 8;
        return v;
    }
};

void bind_blob(Statement& st, int index, const std::string& bytes) {
    const int rc = sqlite3_bind_blob(st.raw(), index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) throw SqliteError("bind sample chunk", rc);
}

void decode_column(Statement& st, int col, std::int64_t tensor_id, std::vector<SampleRow>& out) {
    decode_chunk(sqlite3_column_blob(st.raw(), col), static_cast<std::size_t>(sqlite3_column_bytes(st.raw(), col)),
                 tensor_id, out);
}

bool by_step(const SampleRow& a, const SampleRow& b) {
    return a.step < b.step;
}

}  // namespace

std::int64_t sample_block_of(std::int64_t step) {
    return step >> kSampleBlockShift;
}

std::string encode_chunk(const SampleRow* const* rows, std::size_t n) {
    std::string out;
    out.reserve(n * 48);
    std::int64_t prev_step = 0;
    std::int32_t layout = 0, shape = 0, dtype = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const SampleRow& r = *rows[i];
        put_varint(out, zigzag(static_cast<std::int64_t>(static_cast<std::uint64_t>(r.step) -
                                                         static_cast<std::uint64_t>(prev_step))));
        prev_step = r.step;
        const int count = std::clamp<int>(r.value_count, 0, kMaxNumericOps);
        unsigned head = static_cast<unsigned>(count);
        if (r.layout_id != layout) head |= kLayoutChanged;
        if (r.shape_id != shape) head |= kShapeChanged;
        if (r.dtype_id != dtype) head |= kDtypeChanged;
        if (r.precedence > 0) head |= kFullPrecisionRow;
        out.push_back(static_cast<char>(head));
        if (head & kLayoutChanged) put_varint(out, zigzag(layout = r.layout_id));
        if (head & kShapeChanged) put_varint(out, zigzag(shape = r.shape_id));
        if (head & kDtypeChanged) put_varint(out, zigzag(dtype = r.dtype_id));
        unsigned tags[kMaxNumericOps] = {};
        std::int64_t whole[kMaxNumericOps] = {};
        for (int k = 0; k < count; ++k)
            tags[k] = std::isnan(r.values[k]) ? kNaN : is_whole(r.values[k], whole[k]) ? kWhole : kBytes;
        for (int k = 0; k < count; k += 4) {
            unsigned packed = 0;
            for (int j = 0; j < 4 && k + j < count; ++j) packed |= tags[k + j] << (2 * j);
            out.push_back(static_cast<char>(packed));
        }
        for (int k = 0; k < count; ++k) {
            if (tags[k] == kWhole) {
                put_varint(out, zigzag(whole[k]));
            } else if (tags[k] == kBytes) {
                char bytes[sizeof(double)];
                std::memcpy(bytes, &r.values[k], sizeof bytes);
                out.append(bytes, sizeof bytes);
            }
        }
    }
    return out;
}

void decode_chunk(const void* data, std::size_t bytes, std::int64_t tensor_id, std::vector<SampleRow>& out) {
    const auto* p = static_cast<const unsigned char*>(data);
    ByteReader in{p, p + bytes, tensor_id};
    SampleRow r;
    r.tensor_id = tensor_id;
    std::int64_t step = 0;
    while (in.p != in.end) {
        step = static_cast<std::int64_t>(static_cast<std::uint64_t>(step) +
                                         static_cast<std::uint64_t>(unzigzag(in.varint())));
        r.step = step;
        const unsigned head = in.byte();
        const int count = static_cast<int>(head & 0x0f);
        if (count > kMaxNumericOps) corrupt(tensor_id);
        r.precedence = (head & kFullPrecisionRow) ? kFullPrecision : kRoundedText;
        if (head & kLayoutChanged) r.layout_id = static_cast<std::int32_t>(unzigzag(in.varint()));
        if (head & kShapeChanged) r.shape_id = static_cast<std::int32_t>(unzigzag(in.varint()));
        if (head & kDtypeChanged) r.dtype_id = static_cast<std::int32_t>(unzigzag(in.varint()));
        unsigned tags[kMaxNumericOps] = {};
        for (int k = 0; k < count; k += 4) {
            const unsigned packed = in.byte();
            for (int j = 0; j < 4 && k + j < count; ++j) tags[k + j] = (packed >> (2 * j)) & 3;
        }
        r.value_count = count;
        for (int k = 0; k < kMaxNumericOps; ++k) {
            if (k >= count || tags[k] == kNaN) r.values[k] = std::numeric_limits<double>::quiet_NaN();
            else if (tags[k] == kWhole) r.values[k] = static_cast<double>(unzigzag(in.varint()));
            else if (tags[k] == kBytes) r.values[k] = in.raw_double();
            else corrupt(tensor_id);
        }
        out.push_back(r);
    }
}

// ---- reader ----

SampleChunkReader::SampleChunkReader(Connection& conn)
    : range_(conn,
             "SELECT data FROM sample_chunk WHERE tensor_id = ?1 AND block BETWEEN ?2 AND ?3 AND last_step >= ?4 "
             "AND first_step <= ?5 ORDER BY block, first_step"),
      last_(conn,
            "SELECT max(last_step) FROM sample_chunk WHERE tensor_id = ?1 AND block = (SELECT max(block) FROM "
            "sample_chunk WHERE tensor_id = ?1)"),
      descending_(conn,
                  "SELECT block, data FROM sample_chunk WHERE tensor_id = ? ORDER BY block DESC, first_step DESC") {}

void SampleChunkReader::read(std::int64_t tensor_id, std::int64_t lo, std::int64_t hi, std::vector<SampleRow>& out) {
    out.clear();
    if (lo > hi) return;
    range_.reset();
    range_.bind(1, tensor_id);
    range_.bind(2, sample_block_of(lo));
    range_.bind(3, sample_block_of(hi));
    range_.bind(4, lo);
    range_.bind(5, hi);
    bool sorted = true;
    while (range_.step()) {
        const std::size_t before = out.size();
        decode_column(range_, 0, tensor_id, out);
        // Chunks come by (block, first_step); only chunks of one block that interleave break the order.
        if (before > 0 && before < out.size() && out[before].step < out[before - 1].step) sorted = false;
    }
    range_.reset();
    if (!sorted) std::stable_sort(out.begin(), out.end(), by_step);
    out.erase(std::remove_if(out.begin(), out.end(), [&](const SampleRow& r) { return r.step < lo || r.step > hi; }),
              out.end());
}

std::optional<std::int64_t> SampleChunkReader::last_step(std::int64_t tensor_id) {
    last_.reset();
    last_.bind(1, tensor_id);
    std::optional<std::int64_t> out;
    if (last_.step() && !last_.is_null(0)) out = last_.int64(0);
    last_.reset();
    return out;
}

void SampleChunkReader::recent_steps(std::int64_t tensor_id, std::size_t limit, std::vector<std::int64_t>& out) {
    out.clear();
    if (limit == 0) return;
    descending_.reset();
    descending_.bind(1, tensor_id);
    // Whole blocks, newest first, until `limit` steps are known: a block's chunks may interleave.
    std::optional<std::int64_t> block;
    block_.clear();
    auto take_block = [&] {
        std::sort(block_.begin(), block_.end(), [](const SampleRow& a, const SampleRow& b) { return a.step > b.step; });
        for (const SampleRow& r : block_)
            if (out.size() < limit) out.push_back(r.step);
        block_.clear();
    };
    while (descending_.step()) {
        const std::int64_t b = descending_.int64(0);
        if (block && b != *block) {
            take_block();
            if (out.size() >= limit) break;
        }
        block = b;
        decode_column(descending_, 1, tensor_id, block_);
    }
    descending_.reset();
    if (out.size() < limit) take_block();
}

// ---- writer ----

SampleChunkWriter::SampleChunkWriter(Connection& conn)
    : state_q_(conn,
               "SELECT block, max(last_step), count(*) FROM sample_chunk WHERE tensor_id = ?1 AND block = (SELECT "
               "max(block) FROM sample_chunk WHERE tensor_id = ?1)"),
      block_q_(conn, "SELECT data FROM sample_chunk WHERE tensor_id = ? AND block = ?"),
      erase_(conn, "DELETE FROM sample_chunk WHERE tensor_id = ? AND block = ?"),
      insert_(conn, "INSERT INTO sample_chunk(tensor_id, block, first_step, last_step, n, data) VALUES(?,?,?,?,?,?)"),
      overlap_q_(conn,
                 "SELECT 1 FROM sample_chunk WHERE tensor_id = ? AND block = ? AND first_step <= ? AND last_step >= ? "
                 "LIMIT 1") {}

bool SampleChunkWriter::overlaps(std::int64_t tensor_id, std::int64_t block, std::int64_t lo, std::int64_t hi) {
    overlap_q_.reset();
    overlap_q_.bind(1, tensor_id);
    overlap_q_.bind(2, block);
    overlap_q_.bind(3, hi);
    overlap_q_.bind(4, lo);
    const bool found = overlap_q_.step();
    overlap_q_.reset();
    return found;
}

void SampleChunkWriter::clear() {
    tensors_.clear();
}

SampleChunkWriter::TensorState& SampleChunkWriter::state(std::int64_t tensor_id) {
    auto it = tensors_.find(tensor_id);
    if (it != tensors_.end()) return it->second;
    if (tensors_.size() >= kMaxCachedTensors) tensors_.clear();  // a cache: reloaded on demand
    TensorState s;
    state_q_.reset();
    state_q_.bind(1, tensor_id);
    if (state_q_.step() && !state_q_.is_null(0)) {
        s.last_block = state_q_.int64(0);
        s.last_step = state_q_.int64(1);
        s.chunks_in_last_block = static_cast<int>(state_q_.int64(2));
    }
    state_q_.reset();
    s.fresh = s.chunks_in_last_block == 0;
    return tensors_.emplace(tensor_id, s).first->second;
}

void SampleChunkWriter::insert(std::int64_t tensor_id, std::int64_t block, const std::vector<const SampleRow*>& rows) {
    insert_.reset();
    insert_.bind(1, tensor_id);
    insert_.bind(2, block);
    insert_.bind(3, rows.front()->step);
    insert_.bind(4, rows.back()->step);
    insert_.bind(5, static_cast<std::int64_t>(rows.size()));
    bind_blob(insert_, 6, encode_chunk(rows.data(), rows.size()));
    insert_.run();
}

void SampleChunkWriter::merge_block(std::int64_t tensor_id, std::int64_t block,
                                    const std::vector<const SampleRow*>& fresh,
                                    const std::function<void(const SampleRow&)>* replaced) {
    stored_.clear();
    block_q_.reset();
    block_q_.bind(1, tensor_id);
    block_q_.bind(2, block);
    while (block_q_.step()) decode_column(block_q_, 0, tensor_id, stored_);
    block_q_.reset();
    std::stable_sort(stored_.begin(), stored_.end(), by_step);
    // Stored rows, then the fresh ones over them: a fresh row replaces a stored row of its step.
    std::vector<const SampleRow*> merged;
    merged.reserve(stored_.size() + fresh.size());
    std::size_t i = 0, j = 0;
    while (i < stored_.size() || j < fresh.size()) {
        if (j == fresh.size() || (i < stored_.size() && stored_[i].step < fresh[j]->step)) {
            merged.push_back(&stored_[i++]);
        } else if (i < stored_.size() && stored_[i].step == fresh[j]->step) {
            // The same step again: the fresh row replaces the stored one unless a source of higher precedence
            // wrote that (either way the step's aggregates are rebuilt from what stays).
            if (replaced) (*replaced)(*fresh[j]);
            if (fresh[j]->precedence >= stored_[i].precedence) merged.push_back(fresh[j]);
            else merged.push_back(&stored_[i]);
            ++i;
            ++j;
        } else {
            merged.push_back(fresh[j++]);
        }
    }
    erase_.reset();
    erase_.bind(1, tensor_id);
    erase_.bind(2, block);
    erase_.run();
    if (!merged.empty()) insert(tensor_id, block, merged);
}

void SampleChunkWriter::write_block(std::int64_t tensor_id, std::int64_t block, std::vector<const SampleRow*>& rows,
                                    const std::function<void(const SampleRow&)>& replaced) {
    // A step written twice in this commit: the last write of the highest precedence stays.
    std::size_t kept = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (kept > 0 && rows[kept - 1]->step == rows[i]->step) {
            if (rows[i]->precedence >= rows[kept - 1]->precedence) rows[kept - 1] = rows[i];
            replaced(*rows[i]);
        } else {
            rows[kept++] = rows[i];
        }
    }
    rows.resize(kept);
    TensorState& s = state(tensor_id);
    if (s.chunks_in_last_block == 0 || rows.front()->step > s.last_step) {
        // Appending: the common case, no stored row to look at. Leaving a block seals it: its chunks become one.
        if (s.chunks_in_last_block > 1 && s.last_block < block) {
            merge_block(tensor_id, s.last_block, {}, nullptr);
            s.fresh = false;  // the sealed chunk may span rows written behind and appended ones
        }
        if (s.chunks_in_last_block == 0) s.appended_from = rows.front()->step;
        insert(tensor_id, block, rows);
        s.chunks_in_last_block = s.chunks_in_last_block > 0 && s.last_block == block ? s.chunks_in_last_block + 1 : 1;
        s.last_block = block;
        s.last_step = rows.back()->step;
        return;
    }
    // Behind the tensor's last step, into steps no stored chunk spans (history read after the newest steps): a
    // chunk of its own, as an append is. The block the history left is sealed (the newest block is sealed by the
    // append that leaves it).
    const bool between = s.fresh && rows.front()->step > s.behind_through && rows.back()->step < s.appended_from;
    if (between || !overlaps(tensor_id, block, rows.front()->step, rows.back()->step)) {
        if (s.behind_chunks > 1 && s.behind_block < block && s.behind_block != s.last_block)
            merge_block(tensor_id, s.behind_block, {}, nullptr);
        insert(tensor_id, block, rows);
        s.behind_through = std::max(s.behind_through, rows.back()->step);
        s.behind_chunks = s.behind_block == block ? s.behind_chunks + 1 : 1;
        s.behind_block = block;
        if (block == s.last_block) {
            ++s.chunks_in_last_block;
            s.last_step = std::max(s.last_step, rows.back()->step);
        }
        return;
    }
    // A step at or before the tensor's last, in a stored chunk's span: merge into the block's stored rows.
    merge_block(tensor_id, block, rows, &replaced);
    s.fresh = false;
    if (block == s.behind_block) s.behind_chunks = 1;
    if (block == s.last_block) {
        s.chunks_in_last_block = 1;
        s.last_step = std::max(s.last_step, rows.back()->step);
    } else if (block > s.last_block) {  // cannot happen (rows.front() <= last_step), kept for safety
        s.last_block = block;
        s.chunks_in_last_block = 1;
        s.last_step = rows.back()->step;
    }
}

void SampleChunkWriter::write(const std::vector<SampleRow>& rows, const std::vector<std::uint32_t>& order,
                              const std::function<void(const SampleRow&)>& replaced) {
    std::size_t i = 0;
    while (i < order.size()) {
        const SampleRow& first = rows[order[i]];
        const std::int64_t block = sample_block_of(first.step);
        run_.clear();
        for (; i < order.size(); ++i) {
            const SampleRow& r = rows[order[i]];
            if (r.tensor_id != first.tensor_id || sample_block_of(r.step) != block) break;
            run_.push_back(&r);
        }
        write_block(first.tensor_id, block, run_, replaced);
    }
}

}  // namespace msmon
