// The points a restart left standing: where a later run of the same rank trained a step again (it resumed from a
// checkpoint before the step the earlier run reached), the earlier run's value of that step was abandoned. What a
// person reads as "the value at step N" is the later run's, as the Overview, the Chart and the detectors use.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>

#include "store/reader.hpp"

namespace msmon {

class AbandonedStretches {
public:
    explicit AbandonedStretches(Reader& reader);
    // The point's run trained its step again in a later run.
    bool abandoned(const Point& p) const {
        const auto it = from_.find(p.run_id);
        return it != from_.end() && p.step >= it->second;
    }
    bool empty() const { return from_.empty(); }

private:
    std::unordered_map<std::int64_t, std::int64_t> from_;  // run → the first step a later run trained again
};

// Streams reader.points(filter) without the abandoned points; returns how many were left out.
std::uint64_t points_that_count(Reader& reader, const PointFilter& filter,
                                const std::function<void(const Point&)>& sink);

}  // namespace msmon
