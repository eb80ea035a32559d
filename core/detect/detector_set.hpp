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

#include "core/detect/cross_rank_check.hpp"
#include "core/detect/detector_options.hpp"
#include "core/detect/finding_fold.hpp"
#include "core/detect/job_thresholds.hpp"
#include "core/detect/msprobe_rules.hpp"
#include "core/detect/new_incidents.hpp"
#include "core/detect/param_continuity.hpp"
#include "core/detect/stall_watch.hpp"
#include "core/model/key_registry.hpp"

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
    // When on_idle() will next emit findings held for a rank's next step; nullopt when none are held.
    std::optional<Clock::time_point> next_due() const { return fold_.next_due(options_.fold_max_wait); }
    // Where reading stands for an incident's origin (new_incidents.hpp): findings held, and the step every rank has
    // reached. `quiet_at` is the caller's.
    ReadProgress read_progress(Clock::time_point quiet_at) const;
    // End of a run: evaluate every pending cross-rank group.
    void finish(RecordBatch& batch);
    // Every rank's rows up to `step` are observed (a backlog's history read that far): the cross-rank groups' steps
    // up to it are judged, whichever ranks came, as finish() would judge them, instead of waiting (and spilling to
    // the store past the memory bound) until the whole backlog is read.
    void judge_cross_rank_through(std::int64_t step, RecordBatch& batch);
    // Blocks until every batch observed so far is committed (cross-rank values read back from the store).
    void set_wait_committed(std::function<void()> wait) { cross_.set_wait_committed(std::move(wait)); }
    std::size_t cross_rank_peak_bytes() const { return cross_.peak_bytes(); }

private:
    struct TensorState {
        std::int64_t last_step = -1;
        std::vector<MsprobeSeriesState> ops;    // per numeric op slot
        std::int64_t spike_count = 0;           // global_norm: consecutive values ≥ threshold
        SeriesCheckState checks;                // msmon's default checks: non-finite, jumps
        std::vector<HeldParamRow> held_params;  // param_origin/param_updated rows waiting for their partner
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
    // param_updated(t) against param_origin(t+1) of the same rank (core/detect/param_continuity.hpp), over the
    // batch's param rows (`rows`: indexes into batch.rows) and those held from earlier batches.
    void pair_params(const RecordBatch& batch, const std::vector<std::size_t>& rows);
    std::vector<std::size_t> param_rows_;
    void mindformers_checks(const SampleRow& row, const TensorInfo& t, const RunInfo& run, TensorState& st,
                            RecordBatch& batch);
    void save_cross(RecordBatch& batch);
    // Takes what the batch's readers learned of the job's thresholds; stores the thresholds used when they change.
    void learn_thresholds(RecordBatch& batch);
    void save_fold(RecordBatch& batch);
    std::map<int, std::pair<std::int64_t, std::int64_t>> batch_pace_;  // rank → (run, latest step) in this batch

    IngestStore& store_;
    KeyRegistry& keys_;
    DetectorOptions options_;
    JobThresholds thresholds_{options_};
    std::string thresholds_used_;  // as stored
    std::function<void(const std::string&)> notice_;
    std::optional<MsprobeAlertRules> rules_;
    std::string error_;
    std::unordered_map<std::int64_t, TensorState> states_;
    std::unordered_map<int, std::int64_t> newest_by_rank_;  // each rank's newest step judged, of any tensor
    std::unordered_map<std::int32_t, CheckSlots> slots_;
    FindingFold fold_;
    std::vector<std::int64_t> touched_;  // tensors whose state changed in this batch (rows come sorted by tensor)
    CrossRankCheck cross_{store_, keys_, options_, notice_};
    StallWatch stalls_{options_};
};

}  // namespace msmon
