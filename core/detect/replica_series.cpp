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

std::vector<ReplicaFinding> ReplicaSeries::judge(std::vector<ReplicaCopy>& copies) {
    std::vector<ReplicaFinding> out;
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
    // Each learned group's copies at this step, by class.
    std::map<int, std::map<int, std::vector<const ReplicaCopy*>>> groups;
    for (const auto* c : evidence) {
        const RankState& st = at(c->rank);
        if (st.learned >= 0 && replicas_of(c->rank) >= 2) groups[st.learned][class_of[c->rank]].push_back(c);
    }
    for (auto& [_, sides] : groups) {
        std::size_t most = 0, present = 0;
        for (const auto& [cls, members] : sides) most = std::max(most, members.size()), present += members.size();
        if (present < 2) continue;
        const auto largest =
            std::count_if(sides.begin(), sides.end(), [&](const auto& s) { return s.second.size() == most; });
        if (largest == 1) {
            const auto& held = std::find_if(sides.begin(), sides.end(), [&](const auto& s) {
                                   return s.second.size() == most;
                               })->second;
            for (const auto* c : held) at(c->rank).departed = false;
            for (const auto& [cls, members] : sides) {
                if (&members == &held || members.front()->layout != held.front()->layout) continue;
                for (const auto* c : members) {
                    RankState& st = at(c->rank);
                    if (st.departed) continue;
                    st.departed = true;
                    out.push_back({false, c->rank, c->value, held.front()->value, {}, ranks_of(held), c->tag});
                }
            }
            continue;
        }
        // No value holds a majority: every side is reported, once, naming the others.
        for (const auto& [cls, members] : sides) {
            bool fresh = false;
            for (const auto* c : members) {
                RankState& st = at(c->rank);
                fresh |= !st.departed;
                st.departed = true;
            }
            if (!fresh) continue;
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
    }
    // Learning: a rank's class, the same for kReplicaLearnSteps judged steps, becomes its group.
    for (const auto* c : evidence) {
        RankState& st = at(c->rank);
        const int cls = class_of[c->rank];
        if (cls == st.candidate) st.streak = static_cast<std::int8_t>(std::min<int>(st.streak + 1, kReplicaLearnSteps));
        else st.candidate = cls, st.streak = 1;
        if (st.streak >= kReplicaLearnSteps && st.learned != cls) set_learned(st, cls);
    }
    return out;
}

}  // namespace msmon
