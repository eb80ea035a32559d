// Replicas of one tensor. Data-parallel ranks hold the same weights, reduced gradients and optimizer moments, so
// msprobe prints the same statistics for every copy, bit for bit as printed. Which ranks are replicas is learned
// from the data, not from a config: ranks whose copies printed the same values (every op of the row) at
// kReplicaLearnSteps judged steps in a row, with evidence, are one replica group. Tensor- and pipeline-parallel
// shards never print the same values, so they form no group and are never judged; neither do moments sharded by
// ZeRO or a distributed optimizer.
//
// Evidence: a copy whose values are all zero, constant (min equal to max: a LayerNorm weight of ones prints the
// same on every shard), not finite (NonFinite's case), or too small to print many digits (msprobe prints 6
// decimals: a norm below kReplicaMinNorm keeps at most 3 significant digits, and an Adam second moment printed
// "0.0,1e-06,1.1e-05,0.0" is the same on shards that hold different values) says nothing about who is a
// replica: it is skipped.
//
// Judging a step: within a learned group, the copies that agree with most of the group hold its value; a copy
// that prints anything else departed (reported once, until it agrees again or is learned as a group of its
// own). When no value holds a majority (two replicas that disagree, or two against two), the sides are reported
// as a tie: which copy changed can't be told from the replicas alone. Copies of another layout (ops) than the
// group's value are not comparable and are left alone.
//
// Copies that come late (the job-level judge judges a step once most ranks wrote it, and the other ranks' copies
// when they come): a tie among the copies judged on time, with replicas of the group still to come, is held rather
// than reported, since one late copy can break it. The late copies judge the held step again with every copy: a
// majority names the copy that changed, a tie still without absent replicas is reported. A held tie is reported as
// it stood once `hold` steps were judged after it (the judge keeps no later late copies) or on release(). Replicas
// not seen at all yet (a node whose agent started after the step was judged) can't be waited for: the tie is
// reported, and late copies that break it name the copy that changed as well (readers let the departure replace the
// tie). Either way the tie's ranks are judged with the late ranks of the group as it was then: tied ranks that stay
// apart are learned as groups of their own meanwhile.
//
// A rank whose run changes (a restart: a new segment) starts learning again; it is compared within its segment.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <unordered_map>
#include <vector>

namespace msmon {

inline constexpr int kReplicaLearnSteps = 3;
// No evidence: the copy is not compared and teaches nothing.
inline constexpr std::uint64_t kNoEvidence = 0;

inline constexpr double kReplicaMinNorm = 1e-3;

// No step given: the caller judges steps in order and keeps no late ones.
inline constexpr std::int64_t kReplicaNoStep = std::numeric_limits<std::int64_t>::min();

// Where min, max and norm sit in a row (-1: not collected).
struct ReplicaSlots {
    int min = -1, max = -1, norm = -1;
};
// The digest of a row's values as printed (their bits; -0 is 0), or kNoEvidence.
std::uint64_t replica_digest(const double* values, int count, const ReplicaSlots& slots);

struct ReplicaCopy {
    int rank = 0;
    std::int64_t run = 0;     // the rank's run (segment)
    std::int32_t layout = 0;  // which ops the values are
    std::uint64_t digest = kNoEvidence;
    double value = 0;       // shown in messages (the norm)
    std::uint32_t tag = 0;  // the caller's: passed back in findings
};

struct ReplicaFinding {
    bool tie = false;
    int rank = 0;                        // departed: the rank; tie: the lowest rank of this side
    double value = 0;                    // this copy's (side's) value
    double group_value = 0;              // the agreeing replicas' value (tie: the other side's, its lowest rank's)
    std::vector<int> side;               // tie: this side's ranks
    std::vector<int> others;             // departed: the replicas that agree; tie: the other sides' ranks
    std::uint32_t tag = 0;               // the departing copy's tag
    std::int64_t step = kReplicaNoStep;  // a held tie's step; kReplicaNoStep: the step judged
};

class ReplicaSeries {
public:
    // Judges one step's copies (one per rank). Findings are new departures and new ties only. With `only`
    // (ascending), the step was judged before without those ranks' copies (they came late, or only part of their
    // rows had come): they are judged against every copy now, and only their state and findings change; one of them
    // already judged at this `step` or a later one is compared but learns nothing from it (a group is learned in
    // step order). `step`: kNoStep when the caller judges steps in order and keeps no late ones. `hold` > 0: late
    // copies may come for `hold` judged steps; a tie they could break is held (see the top), and held ties that
    // many steps old are returned with their step.
    static constexpr std::int64_t kNoStep = kReplicaNoStep;
    std::vector<ReplicaFinding> judge(std::vector<ReplicaCopy>& copies, const std::vector<int>* only = nullptr,
                                      std::int64_t step = kNoStep, std::int64_t hold = 0);
    // Every held tie, as it stood (no late copy will come: the job ended or stalled).
    std::vector<ReplicaFinding> release();
    bool holds() const {
        return std::any_of(open_.begin(), open_.end(), [](const OpenTie& t) { return !t.reported; });
    }
    // The learned group's size for `rank` (1: no replica learned).
    int replicas_of(int rank) const;
    // Groups of at least two ranks; the most ranks in one.
    int groups() const;
    int largest() const;
    // The learned groups of at least two ranks, each ascending, by their first rank.
    std::vector<std::vector<int>> members() const;

private:
    // 24 bytes a rank: a job of 1,024 ranks and thousands of tensors keeps one per (tensor, kind, rank).
    struct RankState {
        std::int32_t run = -1;        // -1: not seen yet
        std::int32_t learned = -1;    // the learned group's first rank (-1: none yet)
        std::int32_t candidate = -1;  // the first rank of the copies agreeing with this one, at its last judged step
        std::int8_t streak = 0;       // judged steps in a row with that candidate
        bool departed = false;
        std::int64_t newest = kNoStep;  // the newest step this rank's copy was judged at (when steps are given)
    };
    // Null for a rank out of range (negative, or beyond kMaxRank): not judged.
    RankState* state(int rank, std::int64_t run);
    RankState& at(int rank) { return ranks_[static_cast<std::size_t>(rank)]; }
    void set_learned(RankState& st, int group);
    using Sides = std::map<int, std::vector<const ReplicaCopy*>>;  // a group's copies at a step, by class
    // Every side of a tie, naming the others.
    static std::vector<ReplicaFinding> tie_of(const Sides& sides);
    // The side most copies hold, if one does.
    static const std::vector<const ReplicaCopy*>* majority(const Sides& sides);
    // Marks the side's ranks that `judged` departed; true if one of them had not departed before.
    bool report_side(ReplicaFinding& f, const std::function<bool(int)>& judged);
    // Late copies at `step`: the ties held or reported there, judged again with them.
    void judge_open_ties(std::int64_t step, const std::vector<const ReplicaCopy*>& evidence,
                         const std::unordered_map<int, int>& class_of, const std::function<bool(int)>& mine,
                         std::int64_t hold, std::vector<ReplicaFinding>& out);

    // A tie judged on time that late copies may still break.
    struct OpenTie {
        int group = -1;
        std::int64_t step = kNoStep;
        std::vector<int> ranks;                // every side's, ascending
        int replicas = 0;                      // the group's learned ranks then
        bool reported = false;                 // reported (no replica was missing then); else held
        std::vector<ReplicaFinding> findings;  // held: every side, as it stands
    };

    static constexpr int kMaxRank = 1 << 20;
    std::vector<RankState> ranks_;          // by rank
    std::unordered_map<int, int> members_;  // learned group → its ranks
    std::vector<OpenTie> open_;             // ties of the last `hold` steps that late copies may break
};

}  // namespace msmon
