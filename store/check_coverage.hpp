// What msmon's checks across ranks can see in a store: the replica groups its data shows (learned from the latest
// collected steps with the same rule the detector uses, core/detect/replica_series.hpp) and each check that can't
// run, with why and the monitor config that enables it. What Health lists, in `msmon health` and the TUI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/reader.hpp"

namespace msmon {

struct ReplicaKindCoverage {
    std::string kind;
    std::size_t tensors = 0;  // tensors of this kind at the steps looked at
    std::size_t grouped = 0;  // of them, with a replica group (two ranks or more agreeing)
    int group_size = 0;       // the size most grouped tensors' largest group has
};

struct CheckCoverage {
    std::vector<ReplicaKindCoverage> replicas;  // each replica kind collected, in training order
    std::vector<std::int64_t> steps;            // the steps the groups were learned from, ascending
    std::vector<std::int64_t> looked_at;        // the latest collected steps when it was computed (any kind)
    std::vector<std::string> cannot_run;        // "<check> can't run: <why> (<what enables it>)"
    // Tensors (by name, whatever the kind) with a replica group, and the group size most of them have.
    std::size_t grouped_tensors = 0;
    int group_size = 0;
    bool sizes_differ = false;  // some tensors' groups are of another size
    // The groups of the first tensor grouped as most are (its largest group of group_size ranks), each ascending:
    // which ranks are replicas of which.
    std::vector<std::vector<int>> example_groups;
    std::string example_tensor;
    // "4 replicas of 24 tensors", or "" when no group was learned.
    std::string summary() const;
};

// `previous`: the last result; returned again, without reading the values, while no new step was collected.
CheckCoverage check_coverage(Reader& reader, const CheckCoverage* previous = nullptr);

}  // namespace msmon
