// The median of a sample (the mean of the middle two for an even count), for the detectors' robust statistics.
#pragma once

#include <algorithm>
#include <vector>

namespace msmon {

inline double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace msmon
