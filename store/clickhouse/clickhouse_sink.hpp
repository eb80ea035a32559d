// The agent's shipper: moves what the local spool committed into ClickHouse, exactly once.
//
// Exactly once, in two parts. (1) The spool's high-water marks (store/ship_spool.hpp) advance only after
// ClickHouse acknowledged an INSERT; each INSERT is one gzip body of at most ~100k rows, which 18.16 writes
// as one part or not at all (a truncated gzip body does not decompress, so a cut connection cannot land half
// a batch). (2) After any failure without an answer, and at start, the shipper asks ClickHouse for the
// highest seq/id of this spool and moves its marks up to it before sending again: an INSERT that landed but
// whose answer was lost is not re-sent. ReplacingMergeTree keyed on each row's identity (readers use FINAL)
// is the last line: if anything were re-sent, it still counts once. Parse issues follow the same rules as
// events; module structure and stacks those of checkpoints (a whole generation, sent when it changed).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>

#include "store/clickhouse/clickhouse_client.hpp"
#include "store/ship_rank_steps.hpp"
#include "store/ship_spool.hpp"

namespace msmon {

struct ShipperOptions {
    ClickHouseTarget target;
    std::string job;
    std::string node;
    std::size_t max_values = 100000;  // values per INSERT at most (plus the rest of the last entry)
    std::chrono::milliseconds timeout{30000};
};

struct ShipperCounters {
    std::atomic<std::uint64_t> values{0};   // points acknowledged by ClickHouse
    std::atomic<std::uint64_t> inserts{0};  // INSERTs acknowledged
    std::atomic<std::uint64_t> failures{0};
    std::atomic<std::uint64_t> skipped_as_landed{0};  // journal entries found already in ClickHouse at reconcile
};

class ClickHouseShipper {
public:
    ClickHouseShipper(const std::string& store_path, ShipperOptions options);

    // What the spool records as its destination for these options.
    static std::string destination(const ShipperOptions& options);

    // Ships everything pending now. On failure returns false with `error`; what was acknowledged stays
    // shipped and the rest is sent by a later call.
    bool ship_pending(std::string& error);

    const ShipperCounters& counters() const { return counters_; }

private:
    void reconcile();
    bool ship_points();
    void ship_rank_steps(const std::set<RankStepKey>& touched);
    void ship_anomalies();
    void ship_events();
    void ship_checkpoints();
    // clickhouse_sink_details.cpp
    void ship_issues();
    void ship_node_files();
    void ship_modules();

    static constexpr std::size_t kRecordsPerInsert = 20000;  // anomalies, events, parse issues

    ShipperOptions options_;
    ClickHouseClient client_;
    ShipSpool spool_;
    RankStepReader rank_steps_;
    std::optional<SpoolMark> mark_;
    bool reconciled_ = false;
    std::optional<std::int64_t> files_shipped_;  // the file count last sent since the last reconcile
    std::uint64_t files_version_ = 0;            // node_files' version of it
    ShipperCounters counters_;
};

}  // namespace msmon
