// The schema and its migrations. Samples: v1–v4 kept one row per (tensor, step) in `sample`; v5 keeps chunks of
// a tensor's steps in `sample_chunk` (store/sample_chunks.hpp), so ingest writes one b-tree entry per tensor and
// commit (not per CSV row) and a series read decodes a few blobs. bind_value/column_value remain for the
// migration that reads the old table (NULL there meant NaN).
#include "store/schema.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "core/layout/monitor_layout.hpp"
#include "core/version/build_info.hpp"
#include "store/anomaly_groups.hpp"
#include "store/rank_step_blocks.hpp"
#include "store/run_segment_rows.hpp"
#include "store/sample_chunks.hpp"

namespace msmon {

namespace {

const char* const kMigrations[] = {
    // 0 → 1
    R"sql(
CREATE TABLE run(
  id INTEGER PRIMARY KEY,
  rank INTEGER NOT NULL,
  path TEXT NOT NULL UNIQUE,
  time_label TEXT NOT NULL,
  uid TEXT NOT NULL,
  format TEXT NOT NULL
);
CREATE TABLE tensor(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL,
  kind TEXT NOT NULL,
  vpp_stage TEXT NOT NULL,
  name TEXT NOT NULL,
  micro_step INTEGER,
  layout_id INTEGER NOT NULL
);
CREATE INDEX tensor_by_run ON tensor(run_id);
CREATE INDEX tensor_by_kind_name ON tensor(kind, name);
CREATE TABLE layout(id INTEGER PRIMARY KEY, ops TEXT NOT NULL UNIQUE);
CREATE TABLE text_value(id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);
CREATE TABLE sample(
  tensor_id INTEGER NOT NULL,
  step INTEGER NOT NULL,
  layout_id INTEGER NOT NULL,
  shape_id INTEGER,
  dtype_id INTEGER,
  v0 REAL, v1 REAL, v2 REAL, v3 REAL, v4 REAL, v5 REAL, v6 REAL, v7 REAL,
  PRIMARY KEY(tensor_id, step)
) WITHOUT ROWID;
CREATE TABLE file(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL,
  path TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  dev INTEGER NOT NULL,
  ino INTEGER NOT NULL,
  fp_len INTEGER NOT NULL,
  fp_hash INTEGER NOT NULL,
  offset INTEGER NOT NULL,
  line INTEGER NOT NULL,
  header TEXT NOT NULL
);
CREATE TABLE parse_issue(
  id INTEGER PRIMARY KEY,
  file_id INTEGER NOT NULL,
  line INTEGER NOT NULL,
  reason TEXT NOT NULL,
  excerpt TEXT NOT NULL
);
CREATE TABLE stack_info(
  run_id INTEGER NOT NULL,
  module TEXT NOT NULL,
  stack TEXT NOT NULL,
  PRIMARY KEY(run_id, module)
) WITHOUT ROWID;
)sql",
    // 1 → 2: what logs, dumps and whole-file JSONs tell, and msmon's own detections.
    R"sql(
ALTER TABLE file ADD COLUMN context TEXT NOT NULL DEFAULT '';
CREATE TABLE event(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL,
  rank INTEGER NOT NULL,
  step INTEGER,
  kind TEXT NOT NULL,
  time TEXT NOT NULL,
  message TEXT NOT NULL,
  UNIQUE(rank, kind, step, message)
);
CREATE TABLE anomaly(
  id INTEGER PRIMARY KEY,
  source TEXT NOT NULL,
  rule TEXT NOT NULL,
  rank INTEGER NOT NULL,
  step INTEGER NOT NULL,
  micro_step INTEGER,
  kind TEXT NOT NULL,
  vpp_stage TEXT NOT NULL,
  name TEXT NOT NULL,
  op TEXT NOT NULL,
  value REAL,
  reference REAL,
  message TEXT NOT NULL,
  tag_name TEXT NOT NULL,
  dump_key TEXT NOT NULL,
  call_id INTEGER NOT NULL,
  pp_stage INTEGER NOT NULL,
  vpp INTEGER NOT NULL,
  group_mates TEXT NOT NULL,
  score REAL NOT NULL,
  UNIQUE(source, rule, rank, step, tag_name, op, dump_key)
);
CREATE INDEX anomaly_by_step ON anomaly(step, rank);
CREATE TABLE checkpoint(
  source_path TEXT NOT NULL,
  position INTEGER NOT NULL,
  name TEXT NOT NULL,
  rank INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  step INTEGER NOT NULL,
  times INTEGER NOT NULL,
  healthy INTEGER NOT NULL,
  PRIMARY KEY(source_path, position)
) WITHOUT ROWID;
CREATE TABLE module_struct(
  rank INTEGER NOT NULL,
  module TEXT NOT NULL,
  json TEXT NOT NULL,
  PRIMARY KEY(rank, module)
) WITHOUT ROWID;
CREATE TABLE detector_state(
  tensor_id INTEGER PRIMARY KEY,
  last_step INTEGER NOT NULL,
  state BLOB NOT NULL
);
CREATE TABLE whole_file(
  path TEXT PRIMARY KEY,
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  hash INTEGER NOT NULL
);
CREATE TABLE setting(key TEXT PRIMARY KEY, value TEXT NOT NULL);
)sql",
    // 2 → 3: per-rank step aggregates for the Overview (store/rank_step_blocks.hpp); filled from the samples.
    R"sql(
CREATE TABLE rank_block(
  kind TEXT NOT NULL,
  op TEXT NOT NULL,
  block INTEGER NOT NULL,
  rank INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY(kind, op, block, rank)
) WITHOUT ROWID;
CREATE TABLE kind_range(kind TEXT PRIMARY KEY, min_step INTEGER NOT NULL, max_step INTEGER NOT NULL) WITHOUT ROWID;
)sql",
    // 3 → 4: the Anomalies table's groups and per-(rank, step) breadth (store/anomaly_groups.hpp); filled from
    // the stored anomalies.
    R"sql(
CREATE TABLE anomaly_breadth(
  step INTEGER NOT NULL,
  rank INTEGER NOT NULL,
  n INTEGER NOT NULL,
  max_score REAL NOT NULL,
  PRIMARY KEY(step, rank)
) WITHOUT ROWID;
CREATE TABLE anomaly_group(
  id INTEGER PRIMARY KEY,
  source TEXT NOT NULL,
  rule TEXT NOT NULL,
  rank INTEGER NOT NULL,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  op TEXT NOT NULL,
  count INTEGER NOT NULL,
  first_step INTEGER NOT NULL,
  last_step INTEGER NOT NULL,
  face_id INTEGER NOT NULL,
  best REAL NOT NULL,
  UNIQUE(source, rule, rank, kind, name, op)
);
CREATE INDEX anomaly_group_by_best ON anomaly_group(best DESC, id);
CREATE INDEX tensor_by_kind_layout ON tensor(kind, layout_id);
)sql",
    // 4 → 5: samples in chunks of a tensor's steps (store/sample_chunks.hpp); the sample table's rows move over.
    R"sql(
-- A rowid table: a chunk (up to ~5 KB) stays on its page, where an index b-tree (WITHOUT ROWID) would spill
-- anything over ~2 KB of an 8 KB page into an overflow page of its own.
CREATE TABLE sample_chunk(
  id INTEGER PRIMARY KEY,
  tensor_id INTEGER NOT NULL,
  block INTEGER NOT NULL,
  first_step INTEGER NOT NULL,
  last_step INTEGER NOT NULL,
  n INTEGER NOT NULL,
  data BLOB NOT NULL
);
CREATE UNIQUE INDEX sample_chunk_key ON sample_chunk(tensor_id, block, first_step, last_step);
)sql",
    // 5 → 6: the spool of a store that ships to a whole-job store (store/ship_spool.hpp). ship_journal lists, per
    // commit, each tensor's committed step range; AUTOINCREMENT: seq never repeats after shipped entries are pruned.
    R"sql(
CREATE TABLE ship_journal(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  tensor_id INTEGER NOT NULL,
  lo_step INTEGER NOT NULL,
  hi_step INTEGER NOT NULL
);
CREATE TABLE ship_mark(
  destination TEXT PRIMARY KEY,
  spool INTEGER NOT NULL,
  points_seq INTEGER NOT NULL,
  anomaly_id INTEGER NOT NULL,
  event_id INTEGER NOT NULL,
  checkpoint_hash INTEGER NOT NULL,
  checkpoint_gen INTEGER NOT NULL
);
)sql",
    // 6 → 7: the spool also ships parse issues (after a high-water mark, as events) and module structure
    // and stacks (a new generation when their content changes, as checkpoints).
    R"sql(
ALTER TABLE ship_mark ADD COLUMN issue_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ship_mark ADD COLUMN module_hash INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ship_mark ADD COLUMN module_gen INTEGER NOT NULL DEFAULT 0;
)sql",
    // 7 → 8: file.issues counts a file's malformed lines, stored or not (only the first ones of a file are
    // stored: core/ingest/issue_cap.hpp); the stored ones so far are its count. file_by_kind: start-up reads the
    // few logs and documents by kind, not the whole table (200,000 CSV rows filled a 64 MB page cache). Sample chunks
    // may now set head
    // bit 7 (a row from a full-precision source, which a rounded one does not replace), which an msmon knowing
    // version 7 would read as a corrupt chunk: it is told the store's version instead.
    R"sql(
ALTER TABLE file ADD COLUMN issues INTEGER NOT NULL DEFAULT 0;
UPDATE file SET issues = (SELECT count(*) FROM parse_issue p WHERE p.file_id = file.id);
CREATE INDEX file_by_kind ON file(kind);
)sql",
    // 8 → 9: each run's step range (core/layout/run_segments.hpp: a restart's runs as segments), kept by the
    // writer (store/rank_step_blocks.hpp); filled from the chunks, and the steps two runs hold rebuilt. When each
    // run wrote each step (a CSV's first-seen time, or its mtime): the Chart's wall-clock axis; none for a store
    // written before.
    R"sql(
CREATE TABLE step_time(run_id INTEGER NOT NULL, step INTEGER NOT NULL, wall_ms INTEGER NOT NULL,
  PRIMARY KEY(run_id, step)) WITHOUT ROWID;
CREATE TABLE run_range(run_id INTEGER PRIMARY KEY, first_step INTEGER NOT NULL, last_step INTEGER NOT NULL);
INSERT INTO run_range(run_id, first_step, last_step)
  SELECT t.run_id, min(s.first_step), max(s.last_step) FROM tensor t JOIN sample_chunk s ON s.tensor_id = t.id
  GROUP BY t.run_id;
)sql",
};

// A store written before run_range: the steps two runs of a rank held were summed in rank_block; take each from
// the later run's samples now.
void resolve_restarted_steps(Connection& conn) {
    const std::vector<RunSegment> segments = read_run_segments(conn, true);
    RankStepBlockWriter blocks(conn);
    Statement kinds(conn, "SELECT DISTINCT kind FROM tensor WHERE run_id = ?");
    for (const RunSegment& seg : segments) {
        if (!seg.retrained_from) continue;
        kinds.reset();
        kinds.bind(1, seg.run_id);
        while (kinds.step())
            for (std::int64_t step = *seg.retrained_from; step <= seg.last_step; ++step)
                blocks.rebuild_step(kinds.text(0), seg.rank, step);
        blocks.flush();
    }
}

// A store written before anomaly_group existed: group every stored anomaly, in the order they were stored.
void backfill_anomaly_groups(Connection& conn) {
    AnomalyGroupWriter groups(conn);
    Statement rows(conn, "SELECT id, source, rule, rank, step, kind, name, op, score FROM anomaly ORDER BY id");
    AnomalyRecord a;
    std::size_t n = 0;
    while (rows.step()) {
        a.source = rows.text(1);
        a.rule = rows.text(2);
        a.rank = static_cast<int>(rows.int64(3));
        a.step = rows.int64(4);
        a.kind = rows.text(5);
        a.name = rows.text(6);
        a.op = rows.text(7);
        a.score = rows.real(8);
        groups.add(rows.int64(0), a);
        if (++n % 100000 == 0) groups.flush();
    }
    groups.flush();
}

// A store written before rank_block existed: aggregate every stored row once.
void backfill_rank_blocks(Connection& conn) {
    RankStepBlockWriter blocks(conn, false);  // run_range comes later (version 9), restarts with it
    Statement rows(conn, "SELECT tensor_id, step, layout_id, v0, v1, v2, v3, v4, v5, v6, v7 FROM sample");
    std::size_t n = 0;
    SampleRow row;
    while (rows.step()) {
        row.tensor_id = rows.int64(0);
        row.step = rows.int64(1);
        row.layout_id = static_cast<std::int32_t>(rows.int64(2));
        row.value_count = kValueColumns;
        for (int k = 0; k < kValueColumns; ++k) row.values[k] = column_value(rows.raw(), 3 + k);
        blocks.add(row);
        if (++n % 1000000 == 0) blocks.flush();
    }
    blocks.flush();
}

// A store written before sample_chunk existed: every sample row into chunks, then the old table goes.
void move_samples_to_chunks(Connection& conn) {
    SampleChunkWriter chunks(conn);
    std::vector<SampleRow> rows;
    std::vector<std::uint32_t> order;
    auto write = [&] {
        order.resize(rows.size());
        for (std::size_t k = 0; k < rows.size(); ++k) order[k] = static_cast<std::uint32_t>(k);
        chunks.write(rows, order, [](const SampleRow&) {});
        rows.clear();
    };
    {
        Statement q(conn,
                    "SELECT tensor_id, step, layout_id, shape_id, dtype_id, v0, v1, v2, v3, v4, v5, v6, v7 FROM sample "
                    "ORDER BY tensor_id, step");
        while (q.step()) {
            SampleRow& row = rows.emplace_back();
            row.tensor_id = q.int64(0);
            row.step = q.int64(1);
            row.layout_id = static_cast<std::int32_t>(q.int64(2));
            row.shape_id = static_cast<std::int32_t>(q.opt_int64(3).value_or(0));
            row.dtype_id = static_cast<std::int32_t>(q.opt_int64(4).value_or(0));
            row.value_count = kValueColumns;
            for (int k = 0; k < kValueColumns; ++k) row.values[k] = column_value(q.raw(), 5 + k);
            if (rows.size() >= 1000000) write();  // a tensor's block cut here is merged by the next write
        }
    }
    write();
    conn.exec("DROP TABLE sample");
}

}  // namespace

void bind_value(sqlite3_stmt* st, int index, bool present, double value) {
    if (!present || std::isnan(value)) {
        sqlite3_bind_null(st, index);
    } else if (value == 0 && std::signbit(value)) {
        unsigned char bytes[sizeof value];
        std::memcpy(bytes, &value, sizeof value);
        sqlite3_bind_blob(st, index, bytes, sizeof bytes, SQLITE_TRANSIENT);
    } else {
        sqlite3_bind_double(st, index, value);
    }
}

double column_value(sqlite3_stmt* st, int col) {
    switch (sqlite3_column_type(st, col)) {
        case SQLITE_NULL:
            return std::numeric_limits<double>::quiet_NaN();
        case SQLITE_BLOB: {
            double v = std::numeric_limits<double>::quiet_NaN();
            if (sqlite3_column_bytes(st, col) == sizeof v) std::memcpy(&v, sqlite3_column_blob(st, col), sizeof v);
            return v;
        }
        default:
            return sqlite3_column_double(st, col);
    }
}

namespace {

// SQL run_order(time_label): runs sorted as core/layout's run_order sorts them (a folder's time, not its text:
// "Dec01" comes after "Nov30"; a MindFormers relaunch after the first launch).
void sql_run_order(sqlite3_context* ctx, int, sqlite3_value** argv) {
    const unsigned char* text = sqlite3_value_text(argv[0]);
    const int n = sqlite3_value_bytes(argv[0]);
    sqlite3_result_int64(
        ctx, text ? time_label_order(std::string_view(reinterpret_cast<const char*>(text), static_cast<std::size_t>(n)))
                  : -1);
}

}  // namespace

void configure_connection(Connection& conn, bool writer) {
    sqlite3_create_function(conn.raw(), "run_order", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr, sql_run_order,
                            nullptr, nullptr);
    conn.exec("PRAGMA page_size=8192");  // before the first table exists
    // Page cache: 32 MiB for the writer (interior pages and the leaves being appended to; the reference run's
    // whole store is 31 MB), 8 MiB for readers (views re-read recent pages every refresh: the index pages and the
    // newest chunks stay; older pages come from the OS's cache). Bounds resident memory whatever the store's size:
    // at 64 MiB the reader of msmon-tui on a 64-rank backlog held 42 MB at its peak, past the 200 MB bound.
    conn.exec(writer ? "PRAGMA cache_size=-32768" : "PRAGMA cache_size=-8192");
    conn.exec("PRAGMA temp_store=MEMORY");
    if (writer) {
        conn.exec("PRAGMA journal_mode=WAL");
        conn.exec("PRAGMA synchronous=NORMAL");
        conn.exec("PRAGMA wal_autocheckpoint=4000");
    }
}

namespace {

// msmon_meta's value of `key`, or "" (a store from before the table, or a key never written).
std::string meta_value(Connection& conn, const char* key) {
    try {
        Statement q(conn, "SELECT value FROM msmon_meta WHERE key = ?1");
        q.bind(1, std::string_view(key));
        return q.step() ? q.text(0) : std::string();
    } catch (const SqliteError&) {
        return {};
    }
}

// A store newer than this msmon: which msmon wrote it, so the person knows what to run instead.
[[noreturn]] void throw_too_new(Connection& conn, std::int64_t version, int oldest) {
    const std::string by = meta_value(conn, "written_by");
    std::string text = "'" + conn.path() + "' is store version " + std::to_string(version);
    if (!by.empty()) text += ", written by msmon " + by;
    text += "; this msmon " + std::string(build_info().version) + " reads store versions " + std::to_string(oldest) +
            " to " + std::to_string(kSchemaVersion) + ": open it with msmon " + (by.empty() ? "a newer" : by) +
            (by.empty() ? "" : " or newer");
    throw SqliteError(text, SQLITE_ERROR);
}

}  // namespace

int check_readable_version(Connection& conn) {
    Statement v(conn, "PRAGMA user_version");
    v.step();
    const std::int64_t version = v.int64(0);
    v.reset();
    if (version > kSchemaVersion) throw_too_new(conn, version, kOldestReadableVersion);
    if (version < kOldestReadableVersion)
        throw SqliteError("store version " + std::to_string(version) + " is not one msmon knows ('" + conn.path() +
                              "': this msmon reads versions " + std::to_string(kOldestReadableVersion) + " to " +
                              std::to_string(kSchemaVersion) + ")",
                          SQLITE_ERROR);
    return static_cast<int>(version);
}

void migrate(Connection& conn) {
    Statement version(conn, "PRAGMA user_version");
    version.step();
    const int current = static_cast<int>(version.int64(0));
    version.reset();
    if (current > kSchemaVersion) throw_too_new(conn, current, 1);
    if (current < 0)
        throw SqliteError("store version " + std::to_string(current) + " is not one msmon knows ('" + conn.path() +
                              "': this msmon reads versions 1 to " + std::to_string(kSchemaVersion) + ")",
                          SQLITE_ERROR);
    if (current == 0) {
        // Version 0 is a new, empty file. Tables in it make it another program's database: never written into.
        Statement tables(conn, "SELECT count(*) FROM sqlite_master");
        tables.step();
        if (tables.int64(0) > 0)
            throw SqliteError("'" + conn.path() +
                                  "' is not an msmon store (an SQLite database of another program; "
                                  "it was left as it is)",
                              SQLITE_ERROR);
    }
    for (int v = current; v < kSchemaVersion; ++v) {
        Transaction txn(conn);
        conn.exec(kMigrations[v]);
        if (v == 2) backfill_rank_blocks(conn);
        if (v == 3) backfill_anomaly_groups(conn);
        if (v == 4) move_samples_to_chunks(conn);
        if (v == 8) resolve_restarted_steps(conn);
        conn.exec(("PRAGMA user_version=" + std::to_string(v + 1)).c_str());
        txn.commit();
    }
    // Which msmon made the store and which wrote it last (an older msmon that cannot read it names the latter).
    // Kept outside the versioned schema: a store without the table reads as it always did.
    Transaction txn(conn);
    conn.exec("CREATE TABLE IF NOT EXISTS msmon_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    Statement put(conn, "INSERT INTO msmon_meta(key, value) VALUES('created_by', ?1) ON CONFLICT(key) DO NOTHING");
    put.bind(1, std::string_view(build_info().version));
    put.run();
    Statement written(conn,
                      "INSERT INTO msmon_meta(key, value) VALUES('written_by', ?1) ON CONFLICT(key) DO UPDATE SET "
                      "value = excluded.value");
    written.bind(1, std::string_view(build_info().version));
    written.run();
    txn.commit();
}

}  // namespace msmon
