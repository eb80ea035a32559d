// Judgements across ranks at one step:
// - Outliers: a rank whose gradient norm of a parameter (or MindFormers loss / global norm) is far from the
//   other ranks' — on log|x|, against the ranks' usual spread for that series. A step is judged once enough
//   ranks have passed it (3 of 4, and at least cross_rank_min_ranks).
// - Replicas (core/detect/replica_series.hpp): the copies of a weight, reduced gradient or Adam moment that
//   data-parallel replicas hold print the same values; a copy that departs from its learned group is found. A
//   step is judged once every rank has passed it (or it is kReplicaLag steps behind the outliers' due step: a
//   rank that stopped), so each copy is set against all of its replicas; a copy that arrives later is not judged.
// - Optimizer steps (core/detect/update_steps.hpp): from each weight's param_origin and param_updated norms at a
//   step, its update ratio; most weights of most ranks jumping at one step is one change of the optimizer's
//   step, judged when every rank has passed it, as replicas are.
// Every step is judged at the end of a run. Until then its values wait. A one-shot catch-up reads rank by rank, so a
// whole file's steps wait for the next ranks: values beyond a memory budget are dropped from memory and read back from
// the store, a few steps at a time, when their step is judged (the store holds every observed row by then:
// `wait_committed`). The result is the same whatever the budget.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/detect/detector_options.hpp"
#include "core/detect/replica_series.hpp"
#include "core/detect/update_steps.hpp"
#include "core/model/key_registry.hpp"

namespace msmon {

class CrossRankCheck {
public:
    // The saved state's setting: which steps wait and each rank's latest step, per group.
    static constexpr const char* kSetting = "cross_rank_pending";
    // Replicas: a step this far behind the step most ranks passed is judged without the ranks still behind it.
    static constexpr std::int64_t kReplicaLag = 64;

    CrossRankCheck(IngestStore& store, KeyRegistry& keys, const DetectorOptions& options,
                   std::function<void(const std::string&)> notice);

    // Blocks until every row observed so far is committed; set by the engine before anything is judged.
    void set_wait_committed(std::function<void()> wait) { wait_committed_ = std::move(wait); }
    void collect(const SampleRow& row, const TensorInfo& t, const RunInfo& run);
    // Judges the steps enough ranks have passed (all: every waiting step); anomalies go to `batch`.
    void evaluate(bool all, RecordBatch& batch);
    // Judges every waiting step up to `step`, whichever ranks came (the job-level judge decides when a step is
    // complete: core/detect/step_readiness.hpp).
    void evaluate_through(std::int64_t step, RecordBatch& batch);
    // A step judged before without some ranks (they came late): collect_late() gathers the step's rows of every
    // rank, then judge_late() judges the late ranks' copies against them, changing only those ranks' state
    // (replicas: their learning and departures; outliers: their values against the others', the series' usual
    // spread unchanged; updates: their ratio histories, no finding: the optimizer's step is judged on time).
    void collect_late(const SampleRow& row, const TensorInfo& t, const RunInfo& run);
    void judge_late(std::int64_t step, const std::vector<int>& late_ranks, RecordBatch& batch);
    // Late copies come for `steps` judged steps (the job-level judge): a replica tie they could break is held until
    // they come (core/detect/replica_series.hpp). release_held() reports every held tie as it stands.
    void hold_ties_for_late(std::int64_t steps) { replica_hold_ = steps; }
    void release_held(RecordBatch& batch);
    // The saved state, if it changed since the last call.
    std::optional<std::string> take_changed_state();
    // A killed session's state: its waiting steps are read back from the store when judged.
    void restore(const std::string& text);
    // Replica groups learned so far: tensors (of any replica kind) with a group of at least two ranks, and the
    // largest such group.
    struct ReplicaSummary {
        std::size_t tensors = 0, series = 0;
        int largest = 0;
    };
    ReplicaSummary replica_summary() const;
    // Memory the waiting values take, at most so far (approximately: 32 bytes a value).
    std::size_t peak_bytes() const { return peak_values_ * sizeof(Entry); }

private:
    struct Entry {
        std::uint32_t name;  // index into Group::names
        std::int32_t rank;
        std::int32_t run;      // replicas: the rank's run (segment)
        std::int32_t layout;   // replicas: the ops of the row
        std::uint64_t digest;  // replicas: all of the row's values (replica_digest); updates: 1 param_updated, 0 origin
        double value;          // the norm (MindFormers: the value)
    };
    struct Group {
        enum class Check { outliers, replicas, updates };
        std::string kind, op;
        Check check = Check::outliers;                    // op "replica": replicas; op "update": updates
        std::vector<std::string> stored_kinds;            // where its values are read back from
        std::map<int, std::int64_t> latest;               // rank → latest step it reported
        std::map<std::int64_t, std::vector<Entry>> held;  // step → values, in arrival order
        std::map<std::int64_t, std::int64_t> spilled;     // first → last step: values only in the store
        std::unordered_map<std::string, std::uint32_t> name_ids;
        std::vector<std::string> names;    // vpp:name[:micro] of gradients, tensor name else
        std::vector<double> usual_spread;  // per name: EMA of the ranks' MAD; NaN: none yet
        std::size_t values_per_step = 0;   // the most seen at one step (sizes read-backs)
        // Replicas, updates: per name, the tensor's forward order; steps below this are judged (the rest of a
        // step that came late is not).
        std::vector<std::int64_t> orders;
        std::int64_t judged_below = std::numeric_limits<std::int64_t>::min();
        std::vector<ReplicaSeries> replica_series;               // replicas: per name
        std::vector<std::vector<UpdateHistory>> update_history;  // updates: per name, by rank (40 bytes each)
        bool update_open = false;                                // updates: optimizer_jump's
        bool steps_together() const { return check != Check::outliers; }
    };
    // Where a tensor's rows go, worked out once per (tensor, layout).
    struct Target {
        Group* group = nullptr;
        std::uint32_t name = 0;
    };
    struct Key {
        std::int32_t layout_id = -1;
        int slot = 0;              // the value's slot in the row
        bool needs_count = false;  // msprobe rows: the slot must be within the row's value_count
        int min_slot = -1, max_slot = -1;
        bool updated = false;                // param_updated (updates: the second norm of a ratio)
        Target outliers, replicas, updates;  // the groups a row goes to (none: not judged across ranks)
    };

    const Key& key_of(const SampleRow& row, const TensorInfo& t, const RunInfo& run);
    Group& group_named(const std::string& kind, const std::string& op);
    static std::uint32_t name_id(Group& g, const std::string& name);
    Entry entry_of(const Key& k, const Target& target, const SampleRow& row, const RunInfo& run) const;
    void hold(Group& g, std::int64_t step, const Entry& e);
    bool is_spilled(const Group& g, std::int64_t step) const;
    void spill_until_within_budget();
    void spill_step(Group& g, std::int64_t step);
    // Judges the spilled steps [first, last] of `g`, reading their values back from the store in pieces.
    // Judges `g`'s waiting steps below `below` (none: all), in step order.
    void judge_below(Group& g, std::optional<std::int64_t> below, RecordBatch& batch);
    void judge_spilled(Group& g, std::int64_t first, std::int64_t last, RecordBatch& batch);
    // `only` (ascending): judge just these ranks' copies (late ones), against every copy given.
    void judge(Group& g, std::int64_t step, std::vector<Entry>& entries, RecordBatch& batch,
               const std::vector<int>* only = nullptr);
    void judge_outliers(Group& g, std::int64_t step, std::vector<Entry>& entries, RecordBatch& batch,
                        const std::vector<int>* only);
    void judge_replicas(Group& g, std::int64_t step, std::vector<Entry>& entries, RecordBatch& batch,
                        const std::vector<int>* only);
    // Findings of one rank (and kind, step) are one anomaly: the first tensor in forward order, and how many.
    struct PerRank {
        ReplicaFinding first;
        std::uint32_t name = 0;
        int count = 0;
    };
    using ReplicaFindings = std::map<std::tuple<std::int64_t, bool, int>, PerRank>;  // (step, tie, rank)
    void add_replica_finding(const Group& g, std::int64_t step, std::uint32_t name, ReplicaFinding f,
                             ReplicaFindings& out) const;
    void replica_records(const Group& g, ReplicaFindings& findings, RecordBatch& batch) const;
    void judge_updates(Group& g, std::int64_t step, std::vector<Entry>& entries, RecordBatch& batch,
                       const std::vector<int>* only);
    // A rank's launches: its runs in the order the job launched them (folder time, then id). A relaunch trains some
    // steps again; copies of a step are compared within the latest launch that wrote it (one segment).
    void note_run(const RunInfo& run);
    int launch_of(std::int32_t run);
    // Of `entries` (one name, sorted by rank), each rank's copy from its latest launch, and only copies of the
    // latest launch present: indices into entries.
    std::vector<std::size_t> latest_launch(const std::vector<Entry>& entries, std::size_t begin, std::size_t end);
    // MindFormers' logged learning rate at `step` and the last step before it that logged one, for messages.
    std::string learning_rate_text(std::int64_t step) const;

    IngestStore& store_;
    KeyRegistry& keys_;
    const DetectorOptions& options_;
    std::function<void(const std::string&)> notice_;
    std::function<void()> wait_committed_;
    bool waited_ = false;                        // in this evaluate(): everything observed is in the store
    std::map<std::string, Group> groups_;        // by "kind:op", judged in this order
    std::map<Group*, std::vector<Entry>> late_;  // collect_late()'s, until judge_late()
    std::unordered_map<std::int64_t, Key> keys_by_tensor_;
    std::unordered_set<std::int64_t> runs_loaded_;  // runs whose tensors the registry was asked for
    std::size_t held_values_ = 0;                   // values in memory, and what their steps cost (kStepCost)
    std::size_t peak_values_ = 0;
    std::size_t budget_values_;
    bool changed_ = false;
    std::int64_t replica_hold_ = 0;                  // hold_ties_for_late()
    std::map<std::int64_t, double> learning_rates_;  // step → MindFormers' lr (the last 256 steps logged)
    std::map<int, std::vector<std::pair<std::string, std::int32_t>>> launches_;  // rank → (time label, run), sorted
    std::unordered_map<std::int32_t, int> launch_cache_;                         // run → its index there
};

}  // namespace msmon
