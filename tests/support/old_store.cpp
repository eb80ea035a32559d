#include "tests/support/old_store.hpp"

#include <vector>

#include "store/sample_chunks.hpp"
#include "store/schema.hpp"

namespace msmon::test {

void rewrite_samples_as_version_4(Connection& conn) {
    conn.exec(
        "CREATE TABLE sample(tensor_id INTEGER NOT NULL, step INTEGER NOT NULL, layout_id INTEGER NOT NULL, shape_id "
        "INTEGER, dtype_id INTEGER, v0 REAL, v1 REAL, v2 REAL, v3 REAL, v4 REAL, v5 REAL, v6 REAL, v7 REAL, PRIMARY "
        "KEY(tensor_id, step)) WITHOUT ROWID");
    std::vector<SampleRow> rows;
    {
        Statement chunks(conn, "SELECT tensor_id, data FROM sample_chunk");
        while (chunks.step())
            decode_chunk(sqlite3_column_blob(chunks.raw(), 1),
                         static_cast<std::size_t>(sqlite3_column_bytes(chunks.raw(), 1)), chunks.int64(0), rows);
    }
    Statement insert(conn, "INSERT INTO sample VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (const SampleRow& r : rows) {
        insert.bind(1, r.tensor_id);
        insert.bind(2, r.step);
        insert.bind(3, r.layout_id);
        if (r.shape_id) insert.bind(4, r.shape_id);
        if (r.dtype_id) insert.bind(5, r.dtype_id);
        for (int k = 0; k < kValueColumns; ++k) bind_value(insert.raw(), 6 + k, k < r.value_count, r.values[k]);
        insert.run();
    }
    conn.exec("DROP TABLE sample_chunk");
    rewrite_file_as_version_7(conn);
}

void rewrite_ship_mark_as_version_6(Connection& conn) {
    conn.exec(
        "CREATE TABLE ship_mark_v6(destination TEXT PRIMARY KEY, spool INTEGER NOT NULL, "
        "points_seq INTEGER NOT NULL, anomaly_id INTEGER NOT NULL, event_id INTEGER NOT NULL, "
        "checkpoint_hash INTEGER NOT NULL, checkpoint_gen INTEGER NOT NULL);"
        "INSERT INTO ship_mark_v6 SELECT destination, spool, points_seq, anomaly_id, event_id, "
        "checkpoint_hash, checkpoint_gen FROM ship_mark;"
        "DROP TABLE ship_mark;"
        "ALTER TABLE ship_mark_v6 RENAME TO ship_mark;");
    rewrite_file_as_version_7(conn);
}

void rewrite_file_as_version_7(Connection& conn) {
    rewrite_as_version_8(conn);
    conn.exec("DROP INDEX file_by_kind; ALTER TABLE file DROP COLUMN issues");
}

void rewrite_as_version_8(Connection& conn) {
    conn.exec("DROP TABLE run_range; DROP TABLE step_time");
}

}  // namespace msmon::test
