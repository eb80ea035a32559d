// Reading a spool: journal entries in seq order, each one range scan of one tensor's rows.
#include "store/ship_spool.hpp"

#include <cstdlib>
#include <limits>
#include <random>
#include <stdexcept>

#include "core/tail/file_tailer.hpp"
#include "store/sample_chunks.hpp"
#include "store/schema.hpp"
#include "store/stored_rows.hpp"

namespace msmon {

void enable_spool(Connection& writer, const std::string& destination) {
    Transaction txn(writer);
    Statement existing(writer, "SELECT destination FROM ship_mark");
    if (existing.step()) {
        const std::string current = existing.text(0);
        if (current != destination)
            throw std::runtime_error("this store already ships to " + current + "; ship " + destination +
                                     " from a new store (--db) so that neither destination misses a row");
        return;
    }
    std::random_device rd;
    const std::uint64_t spool = (static_cast<std::uint64_t>(rd()) << 32 | rd()) & 0x7fffffffffffffffull;
    Statement add(writer,
                  "INSERT INTO ship_mark(destination, spool, points_seq, anomaly_id, event_id, checkpoint_hash, "
                  "checkpoint_gen) VALUES(?, ?, 0, 0, 0, 0, 0)");
    add.bind(1, std::string_view(destination));
    add.bind(2, static_cast<std::int64_t>(spool));
    add.run();
    // Rows committed before spooling began: every stored tensor, whole.
    Statement backfill(writer,
                       "INSERT INTO ship_journal(tensor_id, lo_step, hi_step) SELECT id, ?, ? FROM tensor ORDER BY id");
    backfill.bind(1, std::numeric_limits<std::int64_t>::min());
    backfill.bind(2, std::numeric_limits<std::int64_t>::max());
    backfill.run();
    txn.commit();
}

ShipSpool::ShipSpool(const std::string& store_path)
    : read_(store_path, Connection::Mode::read_only), write_(store_path, Connection::Mode::read_write_create) {
    configure_connection(read_, false);
}

SpoolMark ShipSpool::mark() {
    Statement q(read_,
                "SELECT destination, spool, points_seq, anomaly_id, event_id, checkpoint_hash, checkpoint_gen, "
                "issue_id, module_hash, module_gen FROM ship_mark");
    if (!q.step()) throw std::runtime_error("store '" + read_.path() + "' is not a spool (no destination)");
    SpoolMark m;
    m.destination = q.text(0);
    m.spool = static_cast<std::uint64_t>(q.int64(1));
    m.points_seq = q.int64(2);
    m.anomaly_id = q.int64(3);
    m.event_id = q.int64(4);
    m.checkpoint_hash = static_cast<std::uint64_t>(q.int64(5));
    m.checkpoint_gen = q.int64(6);
    m.issue_id = q.int64(7);
    m.module_hash = static_cast<std::uint64_t>(q.int64(8));
    m.module_gen = q.int64(9);
    return m;
}

const ShipSpool::Tensor& ShipSpool::tensor(std::int64_t id) {
    if (auto it = tensors_.find(id); it != tensors_.end()) return it->second;
    Statement q(read_,
                "SELECT r.rank, r.path, t.kind, t.vpp_stage, t.name, t.micro_step FROM tensor t JOIN run r ON "
                "r.id = t.run_id WHERE t.id = ?");
    q.bind(1, id);
    Tensor t;
    if (q.step()) {
        t.rank = static_cast<int>(q.int64(0));
        t.run = q.text(1);
        if (const auto slash = t.run.find_last_of('/'); slash != std::string::npos) t.run.erase(0, slash + 1);
        t.kind = q.text(2);
        t.vpp_stage = q.text(3);
        t.name = q.text(4);
        t.micro_step = q.opt_int64(5).value_or(-1);
    }
    return tensors_.emplace(id, std::move(t)).first->second;
}

const ShipSpool::Layout& ShipSpool::layout(std::int64_t id) {
    if (auto it = layouts_.find(id); it != layouts_.end()) return it->second;
    Statement q(read_, "SELECT ops FROM layout WHERE id = ?");
    q.bind(1, id);
    Layout l;
    if (q.step()) {
        const std::string ops = q.text(0);
        int numeric = 0;
        for (std::size_t start = 0; start <= ops.size();) {
            auto comma = ops.find(',', start);
            std::string op = ops.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
            l.slot.push_back(op == "shape" ? -1 : op == "dtype" ? -2 : numeric++);
            l.ops.push_back(std::move(op));
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
    }
    return layouts_.emplace(id, std::move(l)).first->second;
}

std::string_view ShipSpool::text(std::int64_t id) {
    if (auto it = texts_.find(id); it != texts_.end()) return it->second;
    Statement q(read_, "SELECT text FROM text_value WHERE id = ?");
    q.bind(1, id);
    std::string t = q.step() ? q.text(0) : std::string();
    return texts_.emplace(id, std::move(t)).first->second;
}

std::int64_t ShipSpool::points_after(std::int64_t after_seq, std::size_t max_values,
                                     const std::function<void(const SpoolPoint&)>& sink) {
    read_.exec("BEGIN");  // one snapshot: entries and their rows agree
    struct Guard {
        Connection& c;
        ~Guard() { sqlite3_exec(c.raw(), "COMMIT", nullptr, nullptr, nullptr); }
    } guard{read_};
    Statement entries(read_, "SELECT seq, tensor_id, lo_step, hi_step FROM ship_journal WHERE seq > ? ORDER BY seq");
    SampleChunkReader chunks(read_);
    std::vector<SampleRow> rows;
    entries.bind(1, after_seq);
    std::int64_t last = after_seq;
    std::size_t values = 0;
    SpoolPoint p;
    while (values < max_values && entries.step()) {
        p.seq = entries.int64(0);
        p.tensor_id = entries.int64(1);
        const Tensor& t = tensor(p.tensor_id);
        p.rank = t.rank;
        p.run = t.run;
        p.kind = t.kind;
        p.vpp_stage = t.vpp_stage;
        p.name = t.name;
        p.micro_step = t.micro_step;
        chunks.read(p.tensor_id, entries.int64(2), entries.int64(3), rows);
        for (const SampleRow& row : rows) {
            p.step = row.step;
            const Layout& l = layout(row.layout_id);
            for (std::size_t k = 0; k < l.ops.size(); ++k) {
                p.op = l.ops[k];
                p.op_ord = static_cast<int>(k);
                const int slot = l.slot[k];
                if (slot < 0) {
                    const std::int32_t id = slot == -1 ? row.shape_id : row.dtype_id;
                    p.is_text = true;
                    p.value = 0;
                    p.text = id ? text(id) : std::string_view();
                } else {
                    p.is_text = false;
                    p.text = {};
                    p.value = row.values[slot];
                }
                sink(p);
                ++values;
            }
        }
        last = p.seq;
    }
    return last;
}

std::vector<SpoolAnomaly> ShipSpool::anomalies_after(std::int64_t after_id, std::size_t limit) {
    std::vector<SpoolAnomaly> out;
    const std::string sql = "SELECT id, " + stored_anomaly_columns() + " FROM anomaly WHERE id > ? ORDER BY id LIMIT ?";
    Statement q(read_, sql.c_str());
    q.bind(1, after_id);
    q.bind(2, static_cast<std::int64_t>(limit));
    while (q.step()) {
        SpoolAnomaly s;
        s.id = q.int64(0);
        s.anomaly = read_stored_anomaly(q, 1);
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<SpoolEvent> ShipSpool::events_after(std::int64_t after_id, std::size_t limit) {
    std::vector<SpoolEvent> out;
    Statement q(read_,
                "SELECT id, run_id, rank, step, kind, time, message FROM event WHERE id > ? ORDER BY id LIMIT ?");
    q.bind(1, after_id);
    q.bind(2, static_cast<std::int64_t>(limit));
    while (q.step()) {
        SpoolEvent s;
        s.id = q.int64(0);
        s.event.run_id = q.int64(1);
        s.event.rank = static_cast<int>(q.int64(2));
        s.event.step = q.opt_int64(3);
        s.event.kind = q.text(4);
        s.event.time = q.text(5);
        s.event.message = q.text(6);
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<CheckpointRecord> ShipSpool::checkpoints(std::uint64_t& hash) {
    std::vector<CheckpointRecord> out;
    std::string all;
    Statement q(read_, kStoredCheckpointsQuery);
    while (q.step()) {
        CheckpointRecord c = read_stored_checkpoint(q);
        all += c.source_path + '\x1f' + std::to_string(c.position) + '\x1f' + c.name + '\x1f' + std::to_string(c.rank) +
               '\x1f' + std::to_string(c.epoch) + '\x1f' + std::to_string(c.step) + '\x1f' + std::to_string(c.times) +
               '\x1f' + (c.healthy ? "1" : "0") + '\x1e';
        out.push_back(std::move(c));
    }
    hash = fingerprint_hash(all.data(), all.size()) & 0x7fffffffffffffffull;
    return out;
}

std::int64_t ShipSpool::pending_entries(std::int64_t after_seq) {
    Statement q(read_, "SELECT count(*) FROM ship_journal WHERE seq > ?");
    q.bind(1, after_seq);
    q.step();
    return q.int64(0);
}

void ShipSpool::advance(const SpoolMark& m) {
    Transaction txn(write_);
    Statement up(write_,
                 "UPDATE ship_mark SET points_seq = ?, anomaly_id = ?, event_id = ?, checkpoint_hash = ?, "
                 "checkpoint_gen = ?, issue_id = ?, module_hash = ?, module_gen = ? WHERE destination = ?");
    up.bind(1, m.points_seq);
    up.bind(2, m.anomaly_id);
    up.bind(3, m.event_id);
    up.bind(4, static_cast<std::int64_t>(m.checkpoint_hash));
    up.bind(5, m.checkpoint_gen);
    up.bind(6, m.issue_id);
    up.bind(7, static_cast<std::int64_t>(m.module_hash));
    up.bind(8, m.module_gen);
    up.bind(9, std::string_view(m.destination));
    up.run();
    Statement prune(write_, "DELETE FROM ship_journal WHERE seq <= ?");
    prune.bind(1, m.points_seq);
    prune.run();
    txn.commit();
}

}  // namespace msmon
