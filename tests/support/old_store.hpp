// Stores as older msmon versions wrote them, made from a current one, for the migration tests.
#pragma once

#include "store/sqlite_handle.hpp"

namespace msmon::test {

// Moves every sample from sample_chunk back into the one-row-per-(tensor, step) `sample` table of schema v1–v4
// (NULL for NaN and absent slots, -0.0 as its 8 bytes) and drops sample_chunk. The caller sets user_version.
void rewrite_samples_as_version_4(Connection& conn);

// Rewrites ship_mark as schema v6 made it (no issue_id, module_hash, module_gen), keeping its rows. The
// caller sets user_version.
void rewrite_ship_mark_as_version_6(Connection& conn);

// Drops file.issues and file_by_kind (schema v8): every helper above does it too. The caller sets user_version.
void rewrite_file_as_version_7(Connection& conn);

// Drops run_range and step_time (schema v9): every helper above does it too. The caller sets user_version.
void rewrite_as_version_8(Connection& conn);

}  // namespace msmon::test
