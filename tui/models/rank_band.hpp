// The Chart's band across ranks: per pixel column, the least, the median and the greatest value any
// rank has there, so the focused rank is seen against the spread of all of them, not against eight picked ones.
#pragma once

#include <vector>

#include "core/series/step_columns.hpp"
#include "store/reader.hpp"
#include "tui/widgets/downsample.hpp"

namespace msmon::tui {

struct RankBand {
    std::vector<SeriesPoint> min, median, max;  // one point a column that has values, at its first step
    int ranks = 0;                              // ranks with a value in the window
};

// Over the columns of `split`; NaN and Inf are left out (the ranks' own lines mark them).
RankBand rank_band(const std::vector<RankSeries>& series, const StepColumns& split);

}  // namespace msmon::tui
