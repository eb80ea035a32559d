// The store's schema: versioned with PRAGMA user_version, moved forward by migrations, never backward.
#pragma once

#include "store/sqlite_handle.hpp"

namespace msmon {

inline constexpr int kSchemaVersion = 9;
// The oldest version a read-only open reads as it is (it cannot migrate). Version 8 added file.issues: a reader
// of a version 7 store counts the stored parse issues instead.
inline constexpr int kOldestReadableVersion = 7;
inline constexpr int kValueColumns = 8;  // numeric op slots of a row, in the row's layout order

// Op values in REAL columns (the v1–v4 sample table, anomaly values). NULL is NaN (or an absent slot, per the row's
// layout); -0.0 is stored as its 8 IEEE bytes because SQLite turns whole-number REALs into integers, which would drop
// the sign.
void bind_value(sqlite3_stmt* st, int index, bool present, double value);
double column_value(sqlite3_stmt* st, int col);

// Creates or upgrades the schema. Refuses a store written by a newer msmon.
// The store's version; throws unless a read-only open can read it as it is (kOldestReadableVersion..kSchemaVersion).
int check_readable_version(Connection& conn);
void migrate(Connection& conn);

// Connection settings: WAL, synchronous=NORMAL (safe against process kills), a bounded page cache.
void configure_connection(Connection& conn, bool writer);

}  // namespace msmon
