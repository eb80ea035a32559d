// The run's incidents as a store holds them (core/detect/incidents): every anomaly read and grouped again only
// when the store's anomaly count changes, not on every refresh; past a limit it does not group at all, and says
// so through grouped(). In the TUI the Anomalies tab lists the incidents, the Overview marks the ranks in them,
// the status line counts them (update() is the only I/O; views call it from collect()); `msmon ingest
// --on-incident` finds its new incidents with it.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/detect/incidents.hpp"
#include "store/reader.hpp"

namespace msmon {

// Every anomaly (Reader::anomalies order) and their incidents, most severe first, as one update() read them.
struct IncidentSet {
    std::vector<AnomalyRecord> anomalies;
    std::vector<Incident> incidents;
};

class IncidentIndex {
public:
    // Reading 50,000 anomalies costs ~120 ms (Reader::anomalies, ~2.3 µs each): more than a refresh may take.
    static constexpr std::int64_t kDefaultMaxAnomalies = 50000;
    // Incidents (and, past the limit, anomalies) scored below this are msprobe's per-step noise: no mark.
    static constexpr double kMarkScore = kIncidentScore;

    explicit IncidentIndex(std::int64_t max_anomalies = kDefaultMaxAnomalies) : max_anomalies_(max_anomalies) {}

    // Reads the store's anomaly count (one count, no rows); when it is not the count last seen, reads every
    // anomaly and groups them again, or, past max_anomalies(), reads only the store's marks. True when it
    // read again. A store whose anomalies change without their count changing (a dump rewritten with as many
    // entries) is regrouped at the next change of the count.
    bool update(Reader& reader);

    // The anomalies were read and grouped; false before the first update() and past max_anomalies().
    bool grouped() const { return grouped_; }
    bool over_limit() const { return total_ > max_anomalies_; }
    std::int64_t max_anomalies() const { return max_anomalies_; }
    std::int64_t total() const { return total_ < 0 ? 0 : total_; }  // in the store at the last update()
    // The anomalies and incidents; empty unless grouped(). A view that built rows from one set keeps it (its
    // indices stay valid) until it builds them again, whoever updates the index meanwhile.
    std::shared_ptr<const IncidentSet> set() const { return set_; }
    const std::vector<AnomalyRecord>& anomalies() const { return set_->anomalies; }
    const std::vector<Incident>& incidents() const { return set_->incidents; }
    // Where the Overview puts a mark, (rank, step) pairs, sorted: each member of an incident scored at least
    // kMarkScore ("this rank is in an incident"); not grouped, the store's own marks (an anomaly scored that
    // high at that rank and step).
    const std::vector<std::pair<int, std::int64_t>>& marks() const { return marks_; }
    // Changes whenever anomalies(), incidents() and marks() are replaced.
    std::uint64_t generation() const { return generation_; }

private:
    std::int64_t max_anomalies_;
    std::int64_t total_ = -1;  // -1: never read
    bool grouped_ = false;
    std::shared_ptr<const IncidentSet> set_ = std::make_shared<IncidentSet>();
    std::vector<std::pair<int, std::int64_t>> marks_;
    std::uint64_t generation_ = 0;
};

}  // namespace msmon
