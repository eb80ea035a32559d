// Incidents regrouped when the store's anomaly count changes.
#include "store/incident_index.hpp"

#include <algorithm>
#include <limits>

namespace msmon {

bool IncidentIndex::update(Reader& reader) {
    // No step comes after the last one: the marks query returns nothing and costs one index probe; the count
    // is what is wanted.
    const std::int64_t total = reader.anomaly_marks(0, std::numeric_limits<std::int64_t>::max()).total;
    if (total == total_) return false;
    // Nothing changes until everything is read: a read that throws is tried again at the next update.
    const bool grouped = total <= max_anomalies_;
    auto set = std::make_shared<IncidentSet>();
    std::vector<std::pair<int, std::int64_t>> marks;
    if (!grouped) {
        marks = reader.anomaly_marks(kMarkScore, std::numeric_limits<std::int64_t>::min()).marks;
    } else {
        set->anomalies = reader.anomalies({});
        set->incidents = group_incidents(set->anomalies);
        for (const Incident& inc : set->incidents)
            if (inc.score >= kMarkScore)
                for (const std::size_t m : inc.members)
                    marks.emplace_back(set->anomalies[m].rank, set->anomalies[m].step);
    }
    std::sort(marks.begin(), marks.end());
    marks.erase(std::unique(marks.begin(), marks.end()), marks.end());
    total_ = total;
    grouped_ = grouped;
    set_ = std::move(set);
    marks_ = std::move(marks);
    ++generation_;
    return true;
}

}  // namespace msmon
