// msmon's detectors, run on each batch before it is committed so that anomalies and detector state land in the
// same transaction as the rows they were computed from.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/detect/detector_options.hpp"
#include "core/detect/finding_fold.hpp"
#include "core/detect/msprobe_rules.hpp"
#include "core/detect/stall_watch.hpp"
#include "core/ingest/key_registry.hpp"

namespace msmon {

class DetectorSet {
public:
    using Clock = std::chrono::steady_clock;
    DetectorSet(IngestStore& store, KeyRegistry& keys, DetectorOptions options,
                const std::vector<std::pair<std::string, std::string>>& settings, RecordBatch& batch,
                std::function<void(const std::string&)> notice);

    bool ok(std::string& error) const;
    // Rows sorted by (tensor, step). Adds anomalies and detector state to the batch.
    void observe(RecordBatch& batch);
    // Between reads in follow mode: cross-rank groups that became complete, ranks that stopped.
    void on_idle(Clock::time_point now, RecordBatch& batch);
    // End of a run: evaluate every pending cross-rank group.
    void finish(RecordBatch& batch);

private:
    struct TensorState {
        std::int64_t last_step = -1;
        std::vector<MsprobeSeriesState> ops;  // per numeric op slot
        std::int64_t spike_count = 0;         // global_norm: consecutive values ≥ threshold
        SeriesCheckState checks;              // msmon's default checks: non-finite, jumps
    };
    // Where a tensor's rows go in the cross-rank comparison, worked out once per (tensor, layout).
    struct CrossKey {
        std::int32_t layout_id = -1;
        bool applies = false;
        int slot = 0;                // the value's slot in the row
        bool needs_count = false;    // msprobe rows: the slot must be within the row's value_count
        std::string group, name;
    };
    struct CrossGroup {
        std::map<std::string, std::map<int, double>> values;  // name → rank → value
    };
    void load_states(const RecordBatch& batch);
    TensorState& state_of(std::int64_t tensor_id);
    static std::string encode(const TensorState& s);
    static TensorState decode(const std::string& text);
    void msprobe_compat(const SampleRow& row, const TensorInfo& t, const RunInfo& run, TensorState& st,
                        RecordBatch& batch);
    // msmon's own checks on the series' history (no alert rules needed); findings go to fold_.
    void default_checks(const SampleRow& row, const TensorInfo& t, const RunInfo& run, TensorState& st);
    const CheckSlots& slots_of(std::int32_t layout_id);
    void mindformers_checks(const SampleRow& row, const TensorInfo& t, const RunInfo& run, TensorState& st,
                            RecordBatch& batch);
    // The cross-rank group (kind:op) a row belongs to, the series name in it and the row's value; false if none.
    bool cross_rank_key(const TensorInfo& t, const RunInfo& run, std::int32_t layout_id, CrossKey& key) const;
    bool cross_rank_value(const SampleRow& row, const TensorInfo& t, const RunInfo& run, std::string& group,
                          std::string& name, double& value) const;
    void cross_rank_collect(const SampleRow& row, const TensorInfo& t, const RunInfo& run);
    void cross_rank_evaluate(bool all, RecordBatch& batch);
    // Which (group, step) wait to be judged and each rank's latest step, saved as a setting with every batch that
    // changes them: a killed session's successor reloads the waiting groups' values from the stored rows.
    std::string encode_cross() const;
    void save_cross(RecordBatch& batch);
    void save_fold(RecordBatch& batch);
    void restore_cross(const std::string& text);
    std::map<int, std::pair<std::int64_t, std::int64_t>> batch_pace_;  // rank → (run, latest step) in this batch

    IngestStore& store_;
    KeyRegistry& keys_;
    DetectorOptions options_;
    std::function<void(const std::string&)> notice_;
    std::optional<MsprobeAlertRules> rules_;
    std::string error_;
    std::unordered_map<std::int64_t, TensorState> states_;
    std::unordered_map<std::int32_t, CheckSlots> slots_;
    FindingFold fold_;
    std::vector<std::int64_t> touched_;  // tensors whose state changed in this batch (rows come sorted by tensor)
    std::unordered_map<std::int64_t, CrossKey> cross_keys_;
    std::pair<std::string, std::int64_t> cross_probe_;  // reused lookup key: no allocation per row
    // cross-rank: (group, step) → group values; per group, the latest step each rank reported
    std::map<std::pair<std::string, std::int64_t>, CrossGroup> cross_;
    std::map<std::string, std::map<int, std::int64_t>> cross_latest_;
    std::map<std::string, double> cross_spread_;  // group + name → usual spread of log|x| across ranks (EMA of MADs)
    bool cross_changed_ = false;  // since the last save_cross
    StallWatch stalls_{options_};
};

}  // namespace msmon
