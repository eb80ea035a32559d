#include "store/points_that_count.hpp"

namespace msmon {

AbandonedStretches::AbandonedStretches(Reader& reader) {
    for (const RunSegment& s : reader.run_segments())
        if (s.retrained_from) from_.emplace(s.run_id, *s.retrained_from);
}

std::uint64_t points_that_count(Reader& reader, const PointFilter& filter,
                                const std::function<void(const Point&)>& sink) {
    const AbandonedStretches stretches(reader);
    if (stretches.empty()) {
        reader.points(filter, sink);
        return 0;
    }
    std::uint64_t left_out = 0;
    reader.points(filter, [&](const Point& p) {
        if (stretches.abandoned(p)) ++left_out;
        else sink(p);
    });
    return left_out;
}

}  // namespace msmon
