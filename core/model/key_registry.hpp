// Interns runs, tensors, layouts and texts to integer ids; new ones are added to the batch being built.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/model/ingest_store.hpp"

namespace msmon {

struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
template <typename V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

class KeyRegistry {
public:
    KeyRegistry(IngestStore& store, const IngestSnapshot& snapshot);

    // The run stored for this folder, or a new one added to `batch`.
    std::int64_t run_id(const RunInfo& proto, RecordBatch& batch);
    std::int64_t tensor_id(std::int64_t run_id, std::string_view kind, std::string_view vpp_stage,
                           std::string_view name, std::optional<std::int64_t> micro_step, std::int64_t layout_id,
                           RecordBatch& batch);
    std::int64_t layout_id(std::string_view ops, RecordBatch& batch);
    std::int64_t text_id(std::string_view text, RecordBatch& batch);

    // Distinct ranks among the runs: read by other threads (the progress line runs on the writer's).
    std::size_t rank_count() const { return rank_count_.load(std::memory_order_relaxed); }

    // Makes tensor() know every stored tensor of this run (they are otherwise loaded when the run is first read).
    void load_run_tensors(std::int64_t run_id);

    // Reverse lookups for detectors: what a tensor id, run id and layout id stand for.
    const TensorInfo* tensor(std::int64_t id) const;
    // The id of a tensor this registry knows (created in this session, or stored for a run already read); nullopt
    // otherwise. Never adds one.
    std::optional<std::int64_t> find_tensor(std::int64_t run_id, std::string_view kind, std::string_view vpp_stage,
                                            std::string_view name, std::optional<std::int64_t> micro_step) const;
    const RunInfo* run(std::int64_t id) const;
    // The runs whose folder path begins with `prefix` (a scan: for rare questions, not per row).
    std::vector<const RunInfo*> runs_with_prefix(std::string_view prefix) const;
    const std::string* layout_ops(std::int64_t id) const;

private:
    static void append_key(std::string& key, std::int64_t run_id, std::string_view kind, std::string_view vpp,
                           std::string_view name, std::optional<std::int64_t> micro);

    IngestStore& store_;
    StringMap<std::int64_t> runs_;
    StringMap<std::int64_t> tensors_;
    StringMap<std::int64_t> layouts_;
    StringMap<std::int64_t> texts_;
    std::unordered_set<std::int64_t> loaded_runs_;
    std::unordered_map<std::int64_t, TensorInfo> tensor_info_;
    std::unordered_map<std::int64_t, RunInfo> run_info_;
    std::unordered_map<std::int64_t, std::string> layout_ops_;
    std::map<std::pair<std::int64_t, std::string>, std::int64_t, std::less<>> kind_counts_;  // (run, kind) → tensors
    std::unordered_set<int> ranks_;
    std::atomic<std::size_t> rank_count_{0};
    std::int64_t next_run_ = 1, next_tensor_ = 1, next_layout_ = 1, next_text_ = 1;
    std::string key_;  // reused lookup buffer
};

}  // namespace msmon
