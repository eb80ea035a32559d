// Statistics of simulated tensors (see the header).
#include "core/sim/tensor_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace msmon {

namespace {

constexpr double kZeroEps = 1e-8;  // msprobe's `zeros`: |x| < eps

}  // namespace

double expected_max(double n) {
    static const double small[] = {0, 0, 0.564, 0.846, 1.029, 1.163, 1.267, 1.352};
    if (n < 8) return small[static_cast<int>(std::max(n, 0.0))];
    const double l = std::sqrt(2 * std::log(n));
    return l - (std::log(std::log(n)) + std::log(4 * 3.141592653589793)) / (2 * l) + 0.12;
}

StatRow nan_row(double count) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {nan, nan, nan, nan, count, 0.0};
}

StatRow vector_stats(const double* x, int k, double numel, bool nonneg) {
    double sum = 0, sq = 0, lo = x[0], hi = x[0];
    int zeros = 0;
    for (int i = 0; i < k; ++i) {
        if (std::isnan(x[i])) return nan_row(numel);
        sum += x[i];
        sq += x[i] * x[i];
        lo = std::min(lo, x[i]);
        hi = std::max(hi, x[i]);
        zeros += std::abs(x[i]) < kZeroEps;
    }
    const double kd = k, mean_k = sum / kd;
    StatRow s;
    s.norm = std::sqrt(sq * numel / kd);
    s.zeros = zeros / kd;
    s.nans = 0;
    const double spread = numel > kd ? expected_max(numel) / expected_max(kd) : 1.0;
    if (nonneg) {
        s.mean = mean_k;
        s.max = mean_k + (hi - mean_k) * spread;
        s.min = lo / spread;
    } else {
        s.mean = mean_k * std::sqrt(kd / numel);  // the mean of many elements is closer to zero than of a few
        s.max = s.mean + (hi - mean_k) * spread;
        s.min = s.mean - (mean_k - lo) * spread;
    }
    return s;
}

bool prints_same(const StatRow& a, const StatRow& b, int ndigits) {
    const double scale = std::pow(10.0, ndigits);
    const auto same = [&](double x, double y) {
        if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
        return std::nearbyint(x * scale) == std::nearbyint(y * scale);
    };
    return same(a.min, b.min) && same(a.max, b.max) && same(a.norm, b.norm) && same(a.mean, b.mean) &&
           same(a.nans, b.nans) && same(a.zeros, b.zeros);
}

}  // namespace msmon
