// The local store as the spool of a whole-job store: what was committed since the last shipment, and the
// high-water marks of what the destination has acknowledged. The ingest writer appends to ship_journal in the
// same transaction as the rows; the shipper reads after its marks and advances them once the destination has
// the rows (store/clickhouse/clickhouse_sink.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/model/anomaly_record.hpp"
#include "core/model/record_batch.hpp"
#include "store/reader.hpp"
#include "store/sqlite_handle.hpp"

namespace msmon {

// Where a store ships to, and how far it got. `spool` is a random id given when spooling began: the
// destination tells this spool's rows from those of an earlier store of the same job and node.
struct SpoolMark {
    std::string destination;
    std::uint64_t spool = 0;
    std::int64_t points_seq = 0;  // ship_journal entries up to here are in the destination
    std::int64_t anomaly_id = 0;
    std::int64_t event_id = 0;
    std::uint64_t checkpoint_hash = 0;  // of the checkpoint table last shipped
    std::int64_t checkpoint_gen = 0;
    std::int64_t issue_id = 0;
    std::uint64_t module_hash = 0;  // of the module structure and stacks last shipped
    std::int64_t module_gen = 0;
};

// Makes the store (inside the writer's connection, before any commit) a spool for `destination`: the first
// time, every tensor already stored is journaled whole, so rows committed before spooling began ship too.
// Throws std::runtime_error if it already spools for another destination.
void enable_spool(Connection& writer, const std::string& destination);

// One value ready to ship. Views point into the spool's caches: valid during the callback only.
struct SpoolPoint {
    std::int64_t seq = 0;
    std::int64_t tensor_id = 0;
    int rank = 0;
    std::string_view run, kind, vpp_stage, name;
    std::int64_t micro_step = -1;  // -1: none
    std::int64_t step = 0;
    std::string_view op;
    int op_ord = 0;
    bool is_text = false;
    double value = 0;
    std::string_view text;
};

struct SpoolEvent {
    std::int64_t id = 0;
    EventRecord event;
};

struct SpoolAnomaly {
    std::int64_t id = 0;
    AnomalyRecord anomaly;
};

// A parse issue with the path of its file ("" if the file's row is gone).
struct SpoolIssue {
    std::int64_t id = 0;
    IssueRecord issue;
};

// What the store knows of one module of one rank: its module_struct.json entry and its stack_info.csv stack
// (either may be empty).
struct SpoolModule {
    int rank = 0;
    std::string module;
    std::string structure;
    std::string stack;
};

class ShipSpool {
public:
    // Opens the store's spool (its own connections; the ingest writer may be committing meanwhile).
    explicit ShipSpool(const std::string& store_path);

    // The mark of the store's destination; throws std::runtime_error if the store is not a spool.
    SpoolMark mark();
    // Streams the values of journal entries after `after_seq`, whole entries, stopping after the entry that
    // brings the total to `max_values` or more. Returns the last seq streamed (`after_seq` when nothing is
    // pending).
    std::int64_t points_after(std::int64_t after_seq, std::size_t max_values,
                              const std::function<void(const SpoolPoint&)>& sink);
    std::vector<SpoolAnomaly> anomalies_after(std::int64_t after_id, std::size_t limit);
    std::vector<SpoolEvent> events_after(std::int64_t after_id, std::size_t limit);
    // Every stored checkpoint, and a hash of them all (to ship only when they changed).
    std::vector<CheckpointRecord> checkpoints(std::uint64_t& hash);
    // (store/ship_spool_details.cpp) Parse issues after `after_id`, in id order.
    std::vector<SpoolIssue> issues_after(std::int64_t after_id, std::size_t limit);
    // How many files the store tracks (StoreSummary::files).
    std::int64_t file_count();
    // Every (rank, module) with a structure or a stack, and a hash of them all (to ship only when they
    // changed). A rank's stack is its first run's, as the SQLite reader answers.
    std::vector<SpoolModule> modules(std::uint64_t& hash);
    // Journal entries after `seq`.
    std::int64_t pending_entries(std::int64_t after_seq);
    // Stores the mark and drops the journal entries it covers, in one transaction.
    void advance(const SpoolMark& m);

private:
    struct Tensor {
        int rank = 0;
        std::string run, kind, vpp_stage, name;
        std::int64_t micro_step = -1;
    };
    struct Layout {
        std::vector<std::string> ops;
        std::vector<int> slot;  // value column for numeric ops; -1 shape, -2 dtype
    };
    const Tensor& tensor(std::int64_t id);
    const Layout& layout(std::int64_t id);
    std::string_view text(std::int64_t id);

    Connection read_, write_;
    std::unordered_map<std::int64_t, Tensor> tensors_;
    std::unordered_map<std::int64_t, Layout> layouts_;
    std::unordered_map<std::int64_t, std::string> texts_;
};

}  // namespace msmon
