// The Anomalies table's default view, kept by the writer: one anomaly_group row per (source, rule, rank, kind,
// name, op) with its count, step range and face (the member ranked highest), and anomaly_breadth counting
// anomalies per (rank, step) with their highest score (the Overview's marks). A member's rank score is score +
// 5·log10(breadth of its rank and step) (0 when score <= 0) — the same rule as tui/models/anomaly_table — so the first
// page is an index walk, not a sort of every anomaly. Breadths only grow and anomalies are never removed, so a group's
// best only grows: each commit re-ranks just the members at the (rank, step)s it touched.
#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include "core/model/anomaly_record.hpp"
#include "store/sqlite_handle.hpp"

namespace msmon {

double anomaly_rank_score(double score, std::int64_t breadth);

class AnomalyGroupWriter {
public:
    explicit AnomalyGroupWriter(Connection& conn);
    // An anomaly just stored (a new row, not a duplicate) under `id`.
    void add(std::int64_t id, const AnomalyRecord& a);
    // Breadths, then faces and bests of every group with a member at a touched (rank, step).
    void flush();
    void clear() { touched_.clear(); }

private:
    Statement group_, breadth_, members_, face_;
    struct Touched {
        std::int64_t added = 0;
        double max_score = 0;
    };
    std::map<std::pair<int, std::int64_t>, Touched> touched_;  // (rank, step) → new anomalies there
};

}  // namespace msmon
