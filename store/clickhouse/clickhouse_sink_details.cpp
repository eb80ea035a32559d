// The shipper's per-node details: parse issues after their mark, the node's file count, and module
// structure with stacks as a new generation when they changed (the rest: clickhouse_sink.cpp).
#include "store/clickhouse/clickhouse_schema.hpp"
#include "store/clickhouse/clickhouse_sink.hpp"
#include "store/clickhouse/row_binary.hpp"

namespace msmon {

void ClickHouseShipper::ship_issues() {
    SpoolMark& m = *mark_;
    while (true) {
        const auto batch = spool_.issues_after(m.issue_id, kRecordsPerInsert);
        if (batch.empty()) return;
        RowBinaryWriter w;
        for (const auto& [id, issue] : batch) {
            w.str(options_.job);
            w.str(options_.node);
            w.u64(m.spool);
            w.i64(id);
            w.str(issue.path);
            w.i64(issue.line);
            w.str(issue.reason);
            w.str(issue.excerpt);
        }
        client_.insert(options_.target.database + ".issues (" + kIssueColumns + ")", w.data());
        m.issue_id = batch.back().id;
        spool_.advance(m);
        counters_.inserts += 1;
    }
}

void ClickHouseShipper::ship_node_files() {
    const std::int64_t files = spool_.file_count();
    if (files_shipped_ == files) return;
    // One row per node; the highest version is the count (a re-sent row carries the same count).
    RowBinaryWriter w;
    w.str(options_.job);
    w.str(options_.node);
    w.u64(files_version_ + 1);
    w.u64(static_cast<std::uint64_t>(files));
    client_.insert(options_.target.database + ".node_files (" + kNodeFilesColumns + ")", w.data());
    files_version_ += 1;
    files_shipped_ = files;
    counters_.inserts += 1;
}

void ClickHouseShipper::ship_modules() {
    SpoolMark& m = *mark_;
    std::uint64_t hash = 0;
    const auto all = spool_.modules(hash);
    if (hash == m.module_hash || all.empty()) return;
    // The whole set as a new generation in one INSERT (one part or nothing): readers take each node's latest.
    const std::int64_t gen = m.module_gen + 1;
    RowBinaryWriter w;
    for (const auto& mod : all) {
        w.str(options_.job);
        w.str(options_.node);
        w.u64(static_cast<std::uint64_t>(gen));
        w.i32(mod.rank);
        w.str(mod.module);
        w.str(mod.structure);
        w.str(mod.stack);
    }
    client_.insert(options_.target.database + ".modules (" + kModuleColumns + ")", w.data());
    m.module_gen = gen;
    m.module_hash = hash;
    spool_.advance(m);
    counters_.inserts += 1;
}

}  // namespace msmon
