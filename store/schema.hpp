// The store's schema: versioned with PRAGMA user_version, moved forward by migrations, never backward.
#pragma once

#include "store/sqlite_handle.hpp"

namespace msmon {

inline constexpr int kSchemaVersion = 1;
inline constexpr int kValueColumns = 8;  // sample.v0 .. v7: numeric op slots, in the row's layout order

// Creates or upgrades the schema. Refuses a store written by a newer msmon.
void migrate(Connection& conn);

// Connection settings: WAL, synchronous=NORMAL (safe against process kills), a bounded page cache.
void configure_connection(Connection& conn, bool writer);

}  // namespace msmon
