// Replica groups of one tensor, learned from agreeing copies, and the copies that depart from them (see the
// header).
#include "core/detect/replica_series.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>

namespace msmon {

namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

std::vector<int> ranks_of(const std::vector<const ReplicaCopy*>& copies) {
    std::vector<int> out;
    for (const auto* c : copies) out.push_back(c->rank);
    return out;
}

}  // namespace

std::uint64_t replica_digest(const double* values, int count, const ReplicaSlots& slots) {
    if (count <= 0) return kNoEvidence;
    bool nonzero = false;
    std::uint64_t h = mix(0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(count));
    for (int i = 0; i < count; ++i) {
        if (!std::isfinite(values[i])) return kNoEvidence;
        const double x = values[i] == 0 ? 0.0 : values[i];
        nonzero |= x != 0;
        h = mix(h ^ std::bit_cast<std::uint64_t>(x));
    }
    if (!nonzero) return kNoEvidence;
    const auto has = [count](int slot) { return slot >= 0 && slot < count; };
    if (has(slots.min) && has(slots.max) && values[slots.min] == values[slots.max]) return kNoEvidence;
    if (has(slots.norm) && std::abs(values[slots.norm]) < kReplicaMinNorm) return kNoEvidence;
    return h == kNoEvidence ? 1 : h;
}

ReplicaSeries::RankState* ReplicaSeries::state(int rank, std::int64_t run) {
    if (rank < 0 || rank >= kMaxRank) return nullptr;
    if (static_cast<std::size_t>(rank) >= ranks_.size()) ranks_.resize(static_cast<std::size_t>(rank) + 1);
    RankState& st = at(rank);
    const auto run32 = static_cast<std::int32_t>(run);
    if (st.run >= 0 && st.run != run32) {  // a new segment: what was learned belongs to the old one
        set_learned(st, -1);
        st = RankState{};
    }
    st.run = run32;
    return &st;
}

void ReplicaSeries::set_learned(RankState& st, int group) {
    if (st.learned >= 0) {
        auto it = members_.find(st.learned);
        if (it != members_.end() && --it->second <= 0) members_.erase(it);
    }
    st.learned = group;
    if (group >= 0) ++members_[group];
    st.departed = false;
}

int ReplicaSeries::replicas_of(int rank) const {
    if (rank < 0 || static_cast<std::size_t>(rank) >= ranks_.size()) return 1;
    const RankState& st = ranks_[static_cast<std::size_t>(rank)];
    if (st.learned < 0) return 1;
    const auto m = members_.find(st.learned);
    return m == members_.end() ? 1 : m->second;
}

int ReplicaSeries::groups() const {
    int n = 0;
    for (const auto& [_, size] : members_) n += size >= 2;
    return n;
}

int ReplicaSeries::largest() const {
    int n = 0;
    for (const auto& [_, size] : members_) n = std::max(n, size);
    return n;
}

std::vector<std::vector<int>> ReplicaSeries::members() const {
    std::map<int, std::vector<int>> groups;
    for (std::size_t r = 0; r < ranks_.size(); ++r)
        if (ranks_[r].learned >= 0) groups[ranks_[r].learned].push_back(static_cast<int>(r));
    std::vector<std::vector<int>> out;
    for (auto& [_, ranks] : groups)
        if (ranks.size() >= 2) out.push_back(std::move(ranks));
    return out;
}

std::vector<ReplicaFinding> ReplicaSeries::tie_of(const Sides& sides) {
    std::vector<ReplicaFinding> out;
    for (const auto& [cls, members] : sides) {
        ReplicaFinding f{true, members.front()->rank, members.front()->value, 0, ranks_of(members),
                         {},   members.front()->tag};
        for (const auto& [other_cls, other] : sides) {
            if (&other == &members) continue;
            if (f.others.empty()) f.group_value = other.front()->value;
            for (const auto* c : other) f.others.push_back(c->rank);
        }
        std::sort(f.others.begin(), f.others.end());
        out.push_back(std::move(f));
    }
    return out;
}

const std::vector<const ReplicaCopy*>* ReplicaSeries::majority(const Sides& sides) {
    std::size_t most = 0;
    for (const auto& [cls, members] : sides) most = std::max(most, members.size());
    const std::vector<const ReplicaCopy*>* held = nullptr;
    for (const auto& [cls, members] : sides) {
        if (members.size() != most) continue;
        if (held) return nullptr;
        held = &members;
    }
    return held;
}

bool ReplicaSeries::report_side(ReplicaFinding& f, const std::function<bool(int)>& judged) {
    bool fresh = false;
    for (int r : f.side) {
        if (r < 0 || static_cast<std::size_t>(r) >= ranks_.size() || !judged(r)) continue;
        fresh |= !at(r).departed;
        at(r).departed = true;
    }
    return fresh;
}

std::vector<ReplicaFinding> ReplicaSeries::release() {
    std::vector<ReplicaFinding> out;
    std::erase_if(open_, [&](OpenTie& t) {
        if (t.reported) return false;
        for (auto& f : t.findings)
            if (report_side(f, [](int) { return true; })) out.push_back(std::move(f));
        return true;
    });
    return out;
}

void ReplicaSeries::judge_open_ties(std::int64_t step, const std::vector<const ReplicaCopy*>& evidence,
                                    const std::unordered_map<int, int>& class_of, const std::function<bool(int)>& mine,
                                    std::int64_t hold, std::vector<ReplicaFinding>& out) {
    for (auto it = open_.begin(); it != open_.end();) {
        OpenTie& t = *it;
        if (t.step != step) {
            ++it;
            continue;
        }
        // The tie's copies and the late ones of its group (as learned then: the tied ranks may have been learned as
        // groups of their own since), by class.
        const auto tied = [&t](int rank) { return std::binary_search(t.ranks.begin(), t.ranks.end(), rank); };
        Sides sides;
        bool came = false;
        for (const auto* c : evidence) {
            const bool late = !tied(c->rank) && mine(c->rank) && at(c->rank).learned == t.group;
            if (tied(c->rank) || late) sides[class_of.at(c->rank)].push_back(c);
            came |= late;
        }
        if (!came) {
            ++it;
            continue;
        }
        if (const auto* held = majority(sides)) {
            // The copies that changed: departures, at this step. A held tie's ranks may have been found departed at
            // an earlier step's tie already (the weight stays altered): found once.
            for (const auto* c : *held)
                if (tied(c->rank)) at(c->rank).departed = false;
            for (const auto& [cls, members] : sides) {
                if (&members == held || members.front()->layout != held->front()->layout) continue;
                for (const auto* c : members) {
                    if (!tied(c->rank) || (at(c->rank).departed && !t.reported)) continue;
                    at(c->rank).departed = true;
                    out.push_back({false, c->rank, c->value, held->front()->value, {}, ranks_of(*held), c->tag});
                }
            }
            it = open_.erase(it);
            continue;
        }
        std::size_t present = 0;
        for (const auto& [cls, members] : sides) present += members.size();
        if (!t.reported) {
            auto tie = tie_of(sides);
            if (hold > 0 && present < static_cast<std::size_t>(t.replicas)) {  // more may come
                for (auto& f : tie) f.step = step;
                t.findings = std::move(tie);
                ++it;
                continue;
            }
            for (auto& f : tie)
                if (report_side(f, [](int) { return true; })) out.push_back(std::move(f));
        }
        it = open_.erase(it);
    }
}

std::vector<ReplicaFinding> ReplicaSeries::judge(std::vector<ReplicaCopy>& copies, const std::vector<int>* only,
                                                 std::int64_t step, std::int64_t hold) {
    std::vector<ReplicaFinding> out;
    // Ties no late copy can come to any more: a held one is reported as it stood.
    if (!only && step != kNoStep && hold > 0)
        std::erase_if(open_, [&](OpenTie& t) {
            if (t.step > step - hold) return false;
            if (!t.reported)
                for (auto& f : t.findings)
                    if (report_side(f, [](int) { return true; })) out.push_back(std::move(f));
            return true;
        });
    const auto mine = [only](int rank) { return !only || std::binary_search(only->begin(), only->end(), rank); };
    // Late ranks already judged at this step or a later one: compared, not taught.
    std::vector<int> frozen;
    if (only && step != kNoStep)
        for (const auto& c : copies)
            if (mine(c.rank) && c.rank >= 0 && static_cast<std::size_t>(c.rank) < ranks_.size() &&
                at(c.rank).newest >= step)
                frozen.push_back(c.rank);
    std::sort(frozen.begin(), frozen.end());
    if (step != kNoStep)
        for (const auto& c : copies)
            if (mine(c.rank))
                if (RankState* st = state(c.rank, c.run)) st->newest = std::max(st->newest, step);
    std::vector<const ReplicaCopy*> evidence;
    for (const auto& c : copies)
        if (state(c.rank, c.run) && c.digest != kNoEvidence) evidence.push_back(&c);
    if (evidence.empty()) return out;
    // Classes of equal copies (same ops, same values), each named by its first rank.
    std::sort(evidence.begin(), evidence.end(), [](const ReplicaCopy* a, const ReplicaCopy* b) {
        return std::tie(a->layout, a->digest, a->rank) < std::tie(b->layout, b->digest, b->rank);
    });
    std::unordered_map<int, int> class_of;
    for (std::size_t i = 0; i < evidence.size(); ++i) {
        const bool same =
            i > 0 && evidence[i]->layout == evidence[i - 1]->layout && evidence[i]->digest == evidence[i - 1]->digest;
        class_of[evidence[i]->rank] = same ? class_of[evidence[i - 1]->rank] : evidence[i]->rank;
    }
    if (only && step != kNoStep && !open_.empty()) judge_open_ties(step, evidence, class_of, mine, hold, out);
    // Each learned group's copies at this step, by class.
    std::map<int, Sides> groups;
    for (const auto* c : evidence) {
        const RankState& st = at(c->rank);
        if (st.learned >= 0 && replicas_of(c->rank) >= 2) groups[st.learned][class_of[c->rank]].push_back(c);
    }
    for (auto& [group, sides] : groups) {
        std::size_t present = 0;
        for (const auto& [cls, members] : sides) present += members.size();
        if (present < 2) continue;
        if (const auto* held = majority(sides)) {
            for (const auto* c : *held)
                if (mine(c->rank)) at(c->rank).departed = false;
            for (const auto& [cls, members] : sides) {
                if (&members == held || members.front()->layout != held->front()->layout) continue;
                for (const auto* c : members) {
                    RankState& st = at(c->rank);
                    if (st.departed || !mine(c->rank)) continue;
                    st.departed = true;
                    out.push_back({false, c->rank, c->value, held->front()->value, {}, ranks_of(*held), c->tag});
                }
            }
            continue;
        }
        // No value holds a majority: every side, naming the others.
        auto tie = tie_of(sides);
        std::vector<int> ranks;
        for (const auto& f : tie) ranks.insert(ranks.end(), f.side.begin(), f.side.end());
        std::sort(ranks.begin(), ranks.end());
        const auto size = members_.find(group);
        const int replicas = size == members_.end() ? 0 : size->second;
        const bool open = !only && step != kNoStep && hold > 0;
        // On time, with replicas of the group still to come: held until they come, as one of them can break it.
        if (open && present < static_cast<std::size_t>(replicas)) {
            for (auto& f : tie) f.step = step;
            open_.push_back({group, step, std::move(ranks), replicas, false, std::move(tie)});
            continue;
        }
        // Reported once per side: a side whose judged ranks all departed before says nothing new. On time, replicas
        // the judge never saw may still come late and break it.
        bool reported = false;
        for (auto& f : tie)
            if (report_side(f, mine)) {
                out.push_back(std::move(f));
                reported = true;
            }
        if (open && reported) open_.push_back({group, step, std::move(ranks), replicas, true, {}});
    }
    // Learning: a rank's class, the same for kReplicaLearnSteps judged steps, becomes its group.
    for (const auto* c : evidence) {
        if (!mine(c->rank) || std::binary_search(frozen.begin(), frozen.end(), c->rank)) continue;
        RankState& st = at(c->rank);
        const int cls = class_of[c->rank];
        if (cls == st.candidate) st.streak = static_cast<std::int8_t>(std::min<int>(st.streak + 1, kReplicaLearnSteps));
        else st.candidate = cls, st.streak = 1;
        if (st.streak >= kReplicaLearnSteps && st.learned != cls) set_learned(st, cls);
    }
    return out;
}

}  // namespace msmon
