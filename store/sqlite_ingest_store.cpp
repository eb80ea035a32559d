// Batch commit: every row, key, issue and file offset of a batch lands in one transaction, or none does.
#include "store/sqlite_ingest_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <set>
#include <string>

#include "core/ingest/file_formats.hpp"
#include "core/parse/msprobe_console.hpp"
#include "store/anomaly_groups.hpp"
#include "store/rank_step_blocks.hpp"
#include "store/sample_chunks.hpp"
#include "store/schema.hpp"
#include "store/ship_spool.hpp"
#include "store/stored_rows.hpp"

namespace msmon {

namespace {}  // namespace

struct SqliteIngestStore::WriteStatements {
    explicit WriteStatements(Connection& c)
        : run(c, "INSERT INTO run(id, rank, path, time_label, uid, format) VALUES(?,?,?,?,?,?)"),
          tensor(c,
                 "INSERT INTO tensor(id, run_id, kind, vpp_stage, name, micro_step, layout_id) VALUES(?,?,?,?,?,?,?)"),
          layout(c, "INSERT INTO layout(id, ops) VALUES(?,?)"),
          text(c, "INSERT INTO text_value(id, text) VALUES(?,?)"),
          file(c,
               "INSERT OR REPLACE INTO file(id, run_id, path, kind, dev, ino, fp_len, fp_hash, offset, line, header, "
               "context, issues) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)"),
          // ON CONFLICT DO NOTHING skips duplicates only; OR IGNORE would also drop rows breaking NOT NULL.
          event(c,
                "INSERT INTO event(run_id, rank, step, kind, time, message) VALUES(?,?,?,?,?,?) ON CONFLICT DO "
                "NOTHING"),
          anomaly(c,
                  "INSERT INTO anomaly(source, rule, rank, step, micro_step, kind, vpp_stage, name, op, value, "
                  "reference, message, tag_name, dump_key, call_id, pp_stage, vpp, group_mates, score) "
                  "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING"),
          // msprobe's alert read from a console line: not when its dump entry is stored already.
          console_alert(c,
                        "INSERT INTO anomaly(source, rule, rank, step, micro_step, kind, vpp_stage, name, op, value, "
                        "reference, message, tag_name, dump_key, call_id, pp_stage, vpp, group_mates, score) "
                        "SELECT ?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19 WHERE NOT EXISTS "
                        "(SELECT 1 FROM anomaly WHERE source = ?1 AND rule = ?2 AND rank = ?3 AND step = ?4 AND "
                        "tag_name = ?13 AND op = ?9) ON CONFLICT DO NOTHING"),
          // ... and a dump entry of an alert stored from its console line takes that row (same id, so its group
          // and what was shipped stay right), with the dump's fields.
          dump_over_console(
              c,
              "UPDATE anomaly SET dump_key = ?14, call_id = ?15, pp_stage = ?16, vpp = ?17, "
              "group_mates = ?18, message = ?12, value = ?10, reference = ?11, score = ?19 WHERE source = ?1 AND "
              "dump_key = 'console' AND rule = ?2 AND rank = ?3 AND step = ?4 AND tag_name = ?13 AND "
              "op = ?9"),
          checkpoint_clear(c, "DELETE FROM checkpoint WHERE source_path = ?"),
          checkpoint(c,
                     "INSERT OR REPLACE INTO checkpoint(source_path, position, name, rank, epoch, step, times, "
                     "healthy) VALUES(?,?,?,?,?,?,?,?)"),
          module_struct(c, "INSERT OR REPLACE INTO module_struct(rank, module, json) VALUES(?,?,?)"),
          detector(c, "INSERT OR REPLACE INTO detector_state(tensor_id, last_step, state) VALUES(?,?,?)"),
          whole_file(c, "INSERT OR REPLACE INTO whole_file(path, size, mtime_ns, hash) VALUES(?,?,?,?)"),
          setting(c, "INSERT OR REPLACE INTO setting(key, value) VALUES(?,?)"),
          setting_clear(c, "DELETE FROM setting WHERE key = ?"),
          // The count of repeated (tensor, step) rows, kept as a setting so it survives restarts.
          repeats(c,
                  "INSERT INTO setting(key, value) VALUES('repeated_values', ?) ON CONFLICT(key) DO UPDATE SET "
                  "value = CAST(value AS INTEGER) + CAST(excluded.value AS INTEGER)"),
          issue(c, "INSERT INTO parse_issue(file_id, line, reason, excerpt) VALUES(?,?,?,?)"),
          stack(c, "INSERT OR REPLACE INTO stack_info(run_id, module, stack) VALUES(?,?,?)"),
          journal(c, "INSERT INTO ship_journal(tensor_id, lo_step, hi_step) VALUES(?,?,?)"),
          step_time(
              c,
              "INSERT INTO step_time(run_id, step, wall_ms) VALUES(?,?,?) ON CONFLICT(run_id, step) DO UPDATE SET "
              "wall_ms = min(wall_ms, excluded.wall_ms)") {}
    Statement run, tensor, layout, text, file, event, anomaly, console_alert, dump_over_console, checkpoint_clear,
        checkpoint, module_struct, detector, whole_file, setting, setting_clear, repeats, issue, stack, journal,
        step_time;
};

namespace {

// A new store is built beside its path and renamed into place once its schema is committed and it is in WAL mode:
// a process killed while creating it leaves no store (and a stale "<path>.creating", removed by the next try),
// never a half-made file with a hot rollback journal that read-only openers cannot read.
const std::string& create_if_absent(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 || errno != ENOENT) return path;
    const std::string tmp = path + ".creating";
    for (const char* suffix : {"", "-journal", "-wal", "-shm"}) ::unlink((tmp + suffix).c_str());
    {
        Connection c(tmp, Connection::Mode::read_write_create);
        configure_connection(c, true);
        migrate(c);
        // Everything into the file itself (synced), before it is renamed away from its -wal.
        Statement checkpoint(c, "PRAGMA wal_checkpoint(TRUNCATE)");
        if (!checkpoint.step() || checkpoint.int64(0) != 0)
            throw SqliteError("cannot create store '" + path + "': checkpoint of the new store did not complete",
                              SQLITE_BUSY);
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0)
        throw SqliteError("cannot create store '" + path + "': " + std::strerror(errno), SQLITE_CANTOPEN);
    const auto slash = path.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    if (const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
    return path;
}

}  // namespace

SqliteIngestStore::SqliteIngestStore(const std::string& path, const std::string& ship_destination)
    : write_conn_(create_if_absent(path), Connection::Mode::read_write_create),
      read_conn_(path, Connection::Mode::read_write_create) {
    configure_connection(write_conn_, true);
    migrate(write_conn_);
    if (!ship_destination.empty()) enable_spool(write_conn_, ship_destination);
    {
        Statement marks(write_conn_, "SELECT count(*) FROM ship_mark");
        marks.step();
        journal_ = marks.int64(0) > 0;
    }
    configure_connection(read_conn_, false);
    // The reading thread looks up a few rows at a time (a file's progress, a run's tensors): 8 MiB, not the
    // 64 MiB a view's reader gets, which a start-up over 200,000 files would fill.
    read_conn_.exec("PRAGMA cache_size=-8192");
    stmts_ = std::make_unique<WriteStatements>(write_conn_);
    blocks_ = std::make_unique<RankStepBlockWriter>(write_conn_);
    groups_ = std::make_unique<AnomalyGroupWriter>(write_conn_);
    chunks_ = std::make_unique<SampleChunkWriter>(write_conn_);
}

SqliteIngestStore::~SqliteIngestStore() = default;

namespace {

constexpr const char* kFileColumns =
    "id, run_id, path, kind, dev, ino, fp_len, fp_hash, offset, line, header, context, issues";

// A row of kFileColumns.
FileProgress file_progress_at(Statement& files) {
    FileProgress p;
    p.id = files.int64(0);
    p.run_id = files.int64(1);
    p.path = files.text(2);
    p.kind = files.text(3);
    p.dev = static_cast<std::uint64_t>(files.int64(4));
    p.ino = static_cast<std::uint64_t>(files.int64(5));
    p.fp_len = static_cast<std::uint32_t>(files.int64(6));
    p.fp_hash = static_cast<std::uint64_t>(files.int64(7));
    p.offset = files.int64(8);
    p.line = files.int64(9);
    p.header = share_text(files.text(10));
    p.context = files.text(11);
    p.issues = files.int64(12);
    return p;
}

// The 19 columns of an anomaly row, numbered as the insert statements name them.
void bind_anomaly(Statement& q, const AnomalyRecord& a) {
    q.bind(1, a.source);
    q.bind(2, a.rule);
    q.bind(3, a.rank);
    q.bind(4, a.step);
    q.bind(5, a.micro_step);
    q.bind(6, a.kind);
    q.bind(7, a.vpp_stage);
    q.bind(8, a.name);
    q.bind(9, a.op);
    bind_value(q.raw(), 10, true, a.value);
    bind_value(q.raw(), 11, a.reference.has_value(), a.reference.value_or(0));
    q.bind(12, a.message);
    q.bind(13, a.tag_name);
    q.bind(14, a.key);
    q.bind(15, a.call_id);
    q.bind(16, a.pp_stage);
    q.bind(17, a.vpp);
    q.bind(18, group_mates_text(a.group_mates));
    q.bind(19, std::isfinite(a.score) ? a.score : 0.0);
}

}  // namespace

IngestSnapshot SqliteIngestStore::load_snapshot() {
    IngestSnapshot snap;
    Statement runs(read_conn_, "SELECT id, rank, path, time_label, uid, format FROM run");
    while (runs.step())
        snap.runs.push_back(
            {runs.int64(0), static_cast<int>(runs.int64(1)), runs.text(2), runs.text(3), runs.text(4), runs.text(5)});
    Statement layouts(read_conn_, "SELECT id, ops FROM layout");
    while (layouts.step()) snap.layouts.push_back({layouts.int64(0), layouts.text(1)});
    Statement texts(read_conn_, "SELECT id, text FROM text_value");
    while (texts.step()) snap.texts.push_back({texts.int64(0), texts.text(1)});
    std::set<std::string_view> snapshot_kinds;
    for (const FormatInfo& f : all_formats())
        if (!f.stored_kind.empty()) snapshot_kinds.insert(f.stored_kind);
    std::string kinds;
    for (const auto k : snapshot_kinds) kinds += std::string(kinds.empty() ? "" : ",") + "'" + std::string(k) + "'";
    const std::string files_sql = "SELECT " + std::string(kFileColumns) + " FROM file WHERE kind IN (" + kinds + ")";
    Statement files(read_conn_, files_sql.c_str());
    while (files.step()) snap.files.push_back(file_progress_at(files));
    Statement file_count(read_conn_, "SELECT count(*), coalesce(max(id), 0) FROM file");
    file_count.step();
    snap.file_count = file_count.int64(0);
    snap.max_file_id = file_count.int64(1);
    Statement wholes(read_conn_, "SELECT path, size, mtime_ns, hash FROM whole_file");
    while (wholes.step())
        snap.whole_files.push_back(
            {wholes.text(0), wholes.int64(1), wholes.int64(2), static_cast<std::uint64_t>(wholes.int64(3))});
    Statement settings(read_conn_, "SELECT key, value FROM setting");
    while (settings.step()) snap.settings.emplace_back(settings.text(0), settings.text(1));
    Statement max_tensor(read_conn_, "SELECT coalesce(max(id), 0) FROM tensor");
    max_tensor.step();
    snap.max_tensor_id = max_tensor.int64(0);
    return snap;
}

std::optional<FileProgress> SqliteIngestStore::load_file(const std::string& path) {
    if (!file_by_path_)
        file_by_path_ = std::make_unique<Statement>(
            read_conn_, ("SELECT " + std::string(kFileColumns) + " FROM file WHERE path = ?").c_str());
    Statement& q = *file_by_path_;
    q.reset();
    q.bind(1, std::string_view(path));
    std::optional<FileProgress> out;
    if (q.step()) out = file_progress_at(q);
    q.reset();
    return out;
}

std::vector<TensorInfo> SqliteIngestStore::load_tensors(std::int64_t run_id) {
    std::vector<TensorInfo> out;
    Statement q(read_conn_, "SELECT id, kind, vpp_stage, name, micro_step, layout_id FROM tensor WHERE run_id = ?");
    q.bind(1, run_id);
    while (q.step()) out.push_back({q.int64(0), run_id, q.text(1), q.text(2), q.text(3), q.opt_int64(4), q.int64(5)});
    return out;
}

std::vector<DetectorStateRecord> SqliteIngestStore::load_detector_states(const std::vector<std::int64_t>& tensor_ids) {
    std::vector<DetectorStateRecord> out;
    Statement q(read_conn_, "SELECT last_step, state FROM detector_state WHERE tensor_id = ?");
    for (auto id : tensor_ids) {
        q.bind(1, id);
        if (q.step()) out.push_back({id, q.int64(0), q.text(1)});
        q.reset();
    }
    return out;
}

std::vector<StoredSample> SqliteIngestStore::load_samples(const std::string& kind, std::int64_t first_step,
                                                          std::int64_t last_step) {
    std::vector<StoredSample> out;
    visit_samples(kind, first_step, last_step, [&](StoredSample& s) { out.push_back(s); });
    return out;
}

void SqliteIngestStore::visit_samples(const std::string& kind, std::int64_t first_step, std::int64_t last_step,
                                      const std::function<void(StoredSample&)>& visit) {
    Statement tensors(read_conn_, "SELECT id, run_id FROM tensor WHERE kind = ?");
    tensors.bind(1, std::string_view(kind));
    SampleChunkReader chunks(read_conn_);
    std::vector<SampleRow> rows;  // one tensor's at a time
    while (tensors.step()) {
        chunks.read(tensors.int64(0), first_step, last_step, rows);
        const std::int64_t run_id = tensors.int64(1);
        for (const SampleRow& r : rows) {
            StoredSample s{run_id, r};
            visit(s);
        }
    }
}

bool SqliteIngestStore::failure_may_pass(const std::exception& e) const {
    const auto* sqlite = dynamic_cast<const SqliteError*>(&e);
    if (!sqlite) return true;  // e.g. out of memory
    switch (sqlite->code() & 0xff) {
        case SQLITE_FULL:
        case SQLITE_IOERR:
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
        case SQLITE_NOMEM:
        case SQLITE_CANTOPEN:
        case SQLITE_READONLY:
        case SQLITE_PERM:
        case SQLITE_PROTOCOL:
            return true;
        default:
            return false;
    }
}

void SqliteIngestStore::commit(const RecordBatch& batch) {
    WriteStatements& s = *stmts_;
    Transaction txn(write_conn_);
    for (const auto& r : batch.new_runs) {
        s.run.bind(1, r.id);
        s.run.bind(2, r.rank);
        s.run.bind(3, r.path);
        s.run.bind(4, r.time_label);
        s.run.bind(5, r.uid);
        s.run.bind(6, r.format);
        s.run.run();
    }
    for (const auto& l : batch.new_layouts) {
        s.layout.bind(1, l.id);
        s.layout.bind(2, l.ops);
        s.layout.run();
    }
    for (const auto& t : batch.new_texts) {
        s.text.bind(1, t.id);
        s.text.bind(2, t.text);
        s.text.run();
    }
    for (const auto& t : batch.new_tensors) {
        s.tensor.bind(1, t.id);
        s.tensor.bind(2, t.run_id);
        s.tensor.bind(3, t.kind);
        s.tensor.bind(4, t.vpp_stage);
        s.tensor.bind(5, t.name);
        s.tensor.bind(6, t.micro_step);
        s.tensor.bind(7, t.layout_id);
        s.tensor.run();
    }
    // Rows in key order, into chunks (store/sample_chunks.hpp): stable, so a repeated (tensor, step) keeps its
    // last write last. A row that replaces a stored value has its step's aggregates rebuilt from the samples.
    RankStepBlockWriter& blocks = *blocks_;
    blocks.clear();
    if (last_commit_failed_) {
        chunks_->clear();
        blocks.forget_uncommitted_runs();
    }
    last_commit_failed_ = true;
    std::int64_t repeated = 0;  // rows that replaced a stored value (or one earlier in this batch)
    const std::size_t n = batch.rows.size();
    order_.resize(n);
    for (std::size_t k = 0; k < n; ++k) order_[k] = static_cast<std::uint32_t>(k);
    auto key_less = [&](std::uint32_t a, std::uint32_t b) {
        const SampleRow& x = batch.rows[a];
        const SampleRow& y = batch.rows[b];
        return x.tensor_id != y.tensor_id ? x.tensor_id < y.tensor_id : x.step < y.step;
    };
    if (!std::is_sorted(order_.begin(), order_.end(), key_less))  // the engine hands batches over sorted
        std::stable_sort(order_.begin(), order_.end(), key_less);
    chunks_->write(batch.rows, order_, [&](const SampleRow& row) {
        ++repeated;
        blocks.rebuild(row);
    });
    if (journal_) {
        // One journal entry per tensor of the batch: its committed step range (rows are in (tensor, step) order).
        auto row_at = [&](std::size_t k) -> const SampleRow& { return batch.rows[order_[k]]; };
        for (std::size_t k = 0; k < n;) {
            std::size_t end = k + 1;
            while (end < n && row_at(end).tensor_id == row_at(k).tensor_id) ++end;
            s.journal.bind(1, row_at(k).tensor_id);
            s.journal.bind(2, row_at(k).step);
            s.journal.bind(3, row_at(end - 1).step);
            s.journal.run();
            k = end;
        }
    }
    for (const auto& row : batch.rows) blocks.add(row);
    blocks.flush();
    if (repeated > 0) {
        s.repeats.bind(1, repeated);
        s.repeats.run();
    }
    for (const auto& t : batch.step_times) {
        s.step_time.bind(1, t.run_id);
        s.step_time.bind(2, t.step);
        s.step_time.bind(3, t.wall_ms);
        s.step_time.run();
    }
    for (const auto& st : batch.stacks) {
        s.stack.bind(1, st.run_id);
        s.stack.bind(2, st.module);
        s.stack.bind(3, st.stack);
        s.stack.run();
    }
    for (const auto& p : batch.issues) {
        s.issue.bind(1, p.file_id);
        s.issue.bind(2, p.line);
        s.issue.bind(3, p.reason);
        s.issue.bind(4, p.excerpt);
        s.issue.run();
    }
    for (const auto& e : batch.events) {
        s.event.bind(1, e.run_id);
        s.event.bind(2, e.rank);
        s.event.bind(3, e.step);
        s.event.bind(4, e.kind);
        s.event.bind(5, e.time);
        s.event.bind(6, e.message);
        s.event.run();
    }
    groups_->clear();
    for (const auto& a : batch.anomalies) {
        const bool from_console = a.source == "msprobe" && a.key == kConsoleAlertKey;
        const bool from_dump = a.source == "msprobe" && !from_console;
        Statement& q = from_console ? s.console_alert : s.anomaly;
        if (from_dump) {
            bind_anomaly(s.dump_over_console, a);
            s.dump_over_console.run();
            if (sqlite3_changes(write_conn_.raw()) == 1) continue;  // the console row is now this entry
        }
        bind_anomaly(q, a);
        q.run();
        if (sqlite3_changes(write_conn_.raw()) == 1) groups_->add(sqlite3_last_insert_rowid(write_conn_.raw()), a);
    }
    groups_->flush();
    for (const auto& src : batch.checkpoint_sources) {
        s.checkpoint_clear.bind(1, src);
        s.checkpoint_clear.run();
    }
    for (const auto& c : batch.checkpoints) {
        s.checkpoint.bind(1, c.source_path);
        s.checkpoint.bind(2, c.position);
        s.checkpoint.bind(3, c.name);
        s.checkpoint.bind(4, c.rank);
        s.checkpoint.bind(5, c.epoch);
        s.checkpoint.bind(6, c.step);
        s.checkpoint.bind(7, c.times);
        s.checkpoint.bind(8, c.healthy ? 1 : 0);
        s.checkpoint.run();
    }
    for (const auto& m : batch.module_structs) {
        s.module_struct.bind(1, m.rank);
        s.module_struct.bind(2, m.module);
        s.module_struct.bind(3, m.json);
        s.module_struct.run();
    }
    for (const auto& d : batch.detector_states) {
        s.detector.bind(1, d.tensor_id);
        s.detector.bind(2, d.last_step);
        s.detector.bind(3, d.state);
        s.detector.run();
    }
    for (const auto& w : batch.whole_files) {
        s.whole_file.bind(1, w.path);
        s.whole_file.bind(2, w.size);
        s.whole_file.bind(3, w.mtime_ns);
        s.whole_file.bind(4, static_cast<std::int64_t>(w.hash));
        s.whole_file.run();
    }
    for (const auto& [k, v] : batch.settings) {
        s.setting.bind(1, k);
        s.setting.bind(2, v);
        s.setting.run();
    }
    for (const auto& k : batch.cleared_settings) {
        s.setting_clear.bind(1, k);
        s.setting_clear.run();
    }
    for (const auto& f : batch.files) {
        s.file.bind(1, f.id);
        s.file.bind(2, f.run_id);
        s.file.bind(3, f.path);
        s.file.bind(4, f.kind);
        s.file.bind(5, static_cast<std::int64_t>(f.dev));
        s.file.bind(6, static_cast<std::int64_t>(f.ino));
        s.file.bind(7, static_cast<std::int64_t>(f.fp_len));
        s.file.bind(8, static_cast<std::int64_t>(f.fp_hash));
        s.file.bind(9, f.offset);
        s.file.bind(10, f.line);
        s.file.bind(11, text_of(f.header));
        s.file.bind(12, f.context);
        s.file.bind(13, f.issues);
        s.file.run();
    }
    txn.commit();
    last_commit_failed_ = false;
}

}  // namespace msmon
