#include "tui/views/overview_points.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace msmon::tui {

std::string short_number(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.5g", v);
    return buf;
}

const std::vector<SeriesPoint>& tail_points(const std::vector<StepValue>& in, std::int64_t first,
                                            std::vector<SeriesPoint>& out) {
    auto it =
        std::lower_bound(in.begin(), in.end(), first, [](const StepValue& p, std::int64_t s) { return p.step < s; });
    out.clear();
    for (; it != in.end(); ++it) out.push_back({it->step, it->value});
    return out;
}

}  // namespace msmon::tui
