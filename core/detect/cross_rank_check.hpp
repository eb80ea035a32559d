// Cross-rank outliers: at one step, a rank whose gradient norm of a parameter (or MindFormers loss / global norm)
// is far from the other ranks' — on log|x|, against the ranks' usual spread for that series.
//
// A step is judged once enough ranks have passed it (3 of 4, and at least cross_rank_min_ranks), or at the end of
// a run. Until then its values wait. A one-shot catch-up reads rank by rank, so a whole file's steps wait for the
// next ranks: values beyond a memory budget are dropped from memory and read back from the store, a few steps at
// a time, when their step is judged (the store holds every observed row by then: `wait_committed`). The result is
// the same whatever the budget.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/detect/detector_options.hpp"
#include "core/ingest/key_registry.hpp"

namespace msmon {

class CrossRankCheck {
public:
    // The saved state's setting: which steps wait and each rank's latest step, per group.
    static constexpr const char* kSetting = "cross_rank_pending";

    CrossRankCheck(IngestStore& store, KeyRegistry& keys, const DetectorOptions& options,
                   std::function<void(const std::string&)> notice);

    // Blocks until every row observed so far is committed; set by the engine before anything is judged.
    void set_wait_committed(std::function<void()> wait) { wait_committed_ = std::move(wait); }
    void collect(const SampleRow& row, const TensorInfo& t, const RunInfo& run);
    // Judges the steps enough ranks have passed (all: every waiting step); anomalies go to `batch`.
    void evaluate(bool all, RecordBatch& batch);
    // The saved state, if it changed since the last call.
    std::optional<std::string> take_changed_state();
    // A killed session's state: its waiting steps are read back from the store when judged.
    void restore(const std::string& text);
    // Memory the waiting values take, at most so far (approximately: 16 bytes a value).
    std::size_t peak_bytes() const { return peak_values_ * sizeof(Entry); }

private:
    struct Entry {
        std::uint32_t name;  // index into Group::names
        std::int32_t rank;
        double value;
    };
    struct Group {
        std::string kind, op;
        std::map<int, std::int64_t> latest;               // rank → latest step it reported
        std::map<std::int64_t, std::vector<Entry>> held;  // step → values, in arrival order
        std::map<std::int64_t, std::int64_t> spilled;     // first → last step: values only in the store
        std::unordered_map<std::string, std::uint32_t> name_ids;
        std::vector<std::string> names;    // vpp:name[:micro] of gradients, tensor name else
        std::vector<double> usual_spread;  // per name: EMA of the ranks' MAD; NaN: none yet
        std::size_t values_per_step = 0;   // the most seen at one step (sizes read-backs)
    };
    // Where a tensor's rows go, worked out once per (tensor, layout).
    struct Key {
        std::int32_t layout_id = -1;
        bool applies = false;
        int slot = 0;              // the value's slot in the row
        bool needs_count = false;  // msprobe rows: the slot must be within the row's value_count
        Group* group = nullptr;
        std::uint32_t name = 0;
    };

    const Key& key_of(const SampleRow& row, const TensorInfo& t, const RunInfo& run);
    Group& group_named(const std::string& kind, const std::string& op);
    static std::uint32_t name_id(Group& g, const std::string& name);
    bool is_spilled(const Group& g, std::int64_t step) const;
    void spill_until_within_budget();
    void spill_step(Group& g, std::int64_t step);
    // Judges the spilled steps [first, last] of `g`, reading their values back from the store in pieces.
    void judge_spilled(Group& g, std::int64_t first, std::int64_t last, RecordBatch& batch);
    void judge(Group& g, std::int64_t step, std::vector<Entry>& entries, RecordBatch& batch);

    IngestStore& store_;
    KeyRegistry& keys_;
    const DetectorOptions& options_;
    std::function<void(const std::string&)> notice_;
    std::function<void()> wait_committed_;
    bool waited_ = false;                  // in this evaluate(): everything observed is in the store
    std::map<std::string, Group> groups_;  // by "kind:op", judged in this order
    std::unordered_map<std::int64_t, Key> keys_by_tensor_;
    std::unordered_set<std::int64_t> runs_loaded_;  // runs whose tensors the registry was asked for
    std::size_t held_values_ = 0;                   // values in memory, and what their steps cost (kStepCost)
    std::size_t peak_values_ = 0;
    std::size_t budget_values_;
    bool changed_ = false;
};

}  // namespace msmon
