// Per-series findings of one batch folded into one anomaly per (rule, rank, kind, step): a NaN or a corrupt batch
// fires on hundreds of a rank's tensors at once. The anomaly names the first of them in forward order (the
// order the trainer listed them: the registry's tensor ids) and counts the rest, so a big model does not turn one
// event into a hundred thousand rows. A group is emitted once it is complete — its rank has moved on to a later
// step of that kind, or the run was read to its end — so the same files give the same anomalies however they were
// cut into batches, even while the trainer is half-way through writing a file. Following a job whose rank writes
// nothing more (a NaN that stopped it), a group is emitted after waiting max_wait. What waits is saved with the
// batch (encode/decode) so that a killed msmon's successor emits it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/detect/rules.hpp"
#include "core/model/anomaly_record.hpp"

namespace msmon {

struct SeriesFinding {
    Rule rule = Rule::Jump;  // a rule that judges one series: NonFinite, Jump, Drift, DeadLayer, ContinuityBreak
    int rank = 0;
    std::int64_t step = 0;
    std::int64_t order = 0;  // forward order within the rank's kind
    std::string kind, vpp_stage, name, op;
    std::optional<std::int64_t> micro_step;
    double value = 0;
    std::optional<double> reference;  // the last finite value, or the recent median
    double ratio = 0;                 // jumps: value / median
};

class FindingFold {
public:
    void add(SeriesFinding f);
    // Emits the groups whose (rank, kind) has reached a later step: `latest` maps (rank, kind) to its newest step.
    void emit_completed(const std::map<std::pair<int, std::string>, std::int64_t>& latest,
                        std::vector<AnomalyRecord>& out);
    // Emits every group (the end of the run).
    void emit_all(std::vector<AnomalyRecord>& out);
    // Emits the groups that have waited at least `max_wait` since this process first held them.
    void emit_waiting(std::chrono::steady_clock::time_point now, std::chrono::steady_clock::duration max_wait,
                      std::vector<AnomalyRecord>& out);
    bool empty() const { return groups_.empty(); }
    // The earliest step a waiting group is of; nullopt when none waits.
    std::optional<std::int64_t> oldest_step() const;
    // When emit_waiting() will next emit a group on its own; nullopt when none waits.
    std::optional<std::chrono::steady_clock::time_point> next_due(std::chrono::steady_clock::duration max_wait) const;
    // True once after the waiting groups changed: save encode() then.
    bool take_changed();
    std::string encode() const;
    // False if `text` is not a saved fold (the fold is then empty).
    bool decode(const std::string& text);

private:
    struct Group {
        SeriesFinding first, worst;
        int count = 0;
        std::chrono::steady_clock::time_point since = std::chrono::steady_clock::now();
    };
    // rule (by name: the groups are emitted in the order of their names), rank, kind, step
    using Key = std::tuple<std::string_view, int, std::string, std::int64_t>;
    // A DeadLayer group names the module that changed first in forward order (a Jump or NonFinite group of the
    // same rank, kind and step, when one began earlier): the layer died from there.
    AnomalyRecord emit(const Group& g) const;
    static AnomalyRecord anomaly_of(const Group& g, const SeriesFinding* changed_first);
    std::map<Key, Group> groups_;
    bool changed_ = false;
};

}  // namespace msmon
