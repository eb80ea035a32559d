// One place decides whether a malformed line is stored or only counted.
#include "core/ingest/issue_cap.hpp"

#include <spdlog/spdlog.h>

namespace msmon {

void store_issue(FileProgress& progress, ParseIssue issue, RecordBatch& batch, bool record_word) {
    ++progress.issues;
    if (record_word) spdlog::warn("{}: record {}: {}", issue.path, issue.line, issue.reason);
    else if (issue.line == 0)  // the whole file (a JSON document)
        spdlog::warn("{}: {}", issue.path, issue.reason);
    else if (issue.excerpt.empty()) spdlog::warn("{}:{}: {}", issue.path, issue.line, issue.reason);
    else spdlog::warn("{}:{}: {}: {}", issue.path, issue.line, issue.reason, issue.excerpt);
    if (progress.issues == kStoredIssuesPerFile)
        spdlog::warn("{}: {} malformed lines; more in this file are counted, not stored or logged", issue.path,
                     kStoredIssuesPerFile);
    batch.issues.push_back(std::move(issue));
}

}  // namespace msmon
