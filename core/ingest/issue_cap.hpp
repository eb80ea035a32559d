// Malformed lines: the first kStoredIssuesPerFile of a file are stored (with an excerpt) and logged; the rest are
// only counted, in the file's progress (the store's file.issues), so that a file of garbage cannot fill memory,
// the store or msmon's log (24 MB of bad lines took 748 MB and rotated every earlier log away).
#pragma once

#include <cstdint>

#include "core/model/record_batch.hpp"

namespace msmon {

inline constexpr std::int64_t kStoredIssuesPerFile = 100;

// Counts one malformed line of the file `progress` describes; while under the cap, `make()` builds the issue
// (its excerpt costs time, spent only on the stored ones), which is stored and logged.
// `record_word`: logged as "path: record N: reason" (binary files) instead of "path:N: reason".
void store_issue(FileProgress& progress, ParseIssue issue, RecordBatch& batch, bool record_word = false);
template <typename MakeIssue>
void add_issue(FileProgress& progress, RecordBatch& batch, MakeIssue&& make, bool record_word = false) {
    if (progress.issues >= kStoredIssuesPerFile) {
        ++progress.issues;
        ++batch.unstored_issues;
        return;
    }
    store_issue(progress, make(), batch, record_word);
}

}  // namespace msmon
