// The local store's per-rank step aggregates (store/rank_step_blocks.hpp) for the steps a shipment touched:
// what ClickHouse's rank_steps table gets, so the Overview reads one row per rank and step there instead of
// every value of every parameter.
#pragma once

#include <compare>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "store/rank_step_blocks.hpp"
#include "store/sqlite_handle.hpp"

namespace msmon {

struct RankStepKey {
    std::string kind, op;
    int rank = 0;
    std::int64_t step = 0;
    auto operator<=>(const RankStepKey&) const = default;
};

struct RankStepRow {
    RankStepKey key;
    StepAggregate aggregate;
};

class RankStepReader {
public:
    explicit RankStepReader(const std::string& store_path);
    // The stored aggregates of these steps (one snapshot); keys with none stored are left out.
    std::vector<RankStepRow> read(const std::set<RankStepKey>& keys);

private:
    Connection conn_;
};

}  // namespace msmon
