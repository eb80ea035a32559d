#include "tui/models/rank_band.hpp"

#include <algorithm>
#include <cmath>

namespace msmon::tui {

RankBand rank_band(const std::vector<RankSeries>& series, const StepColumns& split) {
    RankBand band;
    std::vector<std::vector<double>> columns(static_cast<std::size_t>(std::max(0, split.columns())));
    for (const auto& s : series) {
        bool any = false;
        for (const auto& p : s.points) {
            if (p.step < split.lo() || p.step > split.hi() || !std::isfinite(p.value)) continue;
            columns[static_cast<std::size_t>(split.column(p.step))].push_back(p.value);
            any = true;
        }
        band.ranks += any ? 1 : 0;
    }
    for (int c = 0; c < split.columns(); ++c) {
        auto& v = columns[static_cast<std::size_t>(c)];
        if (v.empty()) continue;
        const std::int64_t step = split.first_step(c);
        const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
        std::nth_element(v.begin(), mid, v.end());
        band.median.push_back({step, *mid});
        band.min.push_back({step, *std::min_element(v.begin(), v.end())});
        band.max.push_back({step, *std::max_element(v.begin(), v.end())});
    }
    return band;
}

}  // namespace msmon::tui
