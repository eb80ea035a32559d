// The reduction contract (store/series_reduction.hpp): on the plot's own pixel columns a reduced series draws
// exactly what every step draws — pixels, NaN/Inf marks, y axis, cursor read-out — linear and log scale, zoomed
// or not; and it is small.
#include "store/series_reduction.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "tests/support/chart_render.hpp"

namespace msmon {
namespace {

std::vector<RankSeries> random_series(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> unit(0, 1);
    std::vector<RankSeries> out;
    const int ranks = 1 + static_cast<int>(rng() % 4);
    for (int r = 0; r < ranks; ++r) {
        RankSeries rs{r * 3, {}};
        std::int64_t step = static_cast<std::int64_t>(rng() % 50) - 10;
        const std::size_t n = rng() % 4 == 0 ? rng() % 8 : 1 + rng() % 3000;
        double level = unit(rng) < 0.3 ? -1 : 1;
        for (std::size_t i = 0; i < n; ++i) {
            step += unit(rng) < 0.02 ? 1 + static_cast<std::int64_t>(rng() % 500)
                                     : 1 + static_cast<std::int64_t>(rng() % 3);
            level += (unit(rng) - 0.5) * 0.2;
            double v = level;
            const double roll = unit(rng);
            if (roll < 0.01) v = std::numeric_limits<double>::quiet_NaN();
            else if (roll < 0.015) v = std::numeric_limits<double>::infinity();
            else if (roll < 0.02) v = -std::numeric_limits<double>::infinity();
            else if (roll < 0.03) v *= 1000;  // a spike
            else if (roll < 0.04) v = 0;
            rs.points.push_back({step, v});
        }
        if (!rs.points.empty()) out.push_back(std::move(rs));
    }
    return out;
}

TEST(SeriesReduction, reduced_series_draw_exactly_as_every_step_on_their_columns) {
    std::mt19937_64 rng(20261122);
    int reduced_somewhere = 0;
    for (int iteration = 0; iteration < 400; ++iteration) {
        auto full = random_series(rng);
        if (full.empty()) continue;
        std::int64_t first = full[0].points.front().step, last = full[0].points.back().step;
        for (const auto& rs : full)
            first = std::min(first, rs.points.front().step), last = std::max(last, rs.points.back().step);
        test::ChartFrame frame;
        frame.width = 20 + static_cast<int>(rng() % 120);
        frame.height = 6 + static_cast<int>(rng() % 25);
        frame.log_y = rng() % 3 == 0;
        frame.unicode = rng() % 5 != 0;
        SeriesWindow window;
        frame.lo = first, frame.hi = last;
        if (rng() % 2) {  // zoomed: anywhere, sometimes narrower than the plot in steps, sometimes past the data
            const std::int64_t span = last - first + 1;
            frame.lo = first - 20 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(span + 20));
            frame.hi = frame.lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rng() % 3 ? span : 40));
            window.lo = frame.lo, window.hi = frame.hi;
        }
        if (rng() % 2)
            frame.cursor =
                frame.lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(frame.hi - frame.lo + 1));
        const auto expected = test::render_chart(full, frame);
        ASSERT_GT(expected.plot_columns, 0);
        window.columns = expected.plot_columns;
        window.keep_step = frame.cursor;
        auto reduced = full;
        reduce_series(reduced, window);
        std::size_t before = 0, after = 0;
        for (std::size_t i = 0; i < full.size(); ++i)
            before += full[i].points.size(), after += reduced[i].points.size();
        reduced_somewhere += after < before;
        const auto got = test::render_chart(reduced, frame);
        ASSERT_EQ(test::first_difference(expected.buffer, got.buffer), "")
            << "iteration " << iteration << ": " << full.size() << " ranks, steps " << frame.lo << ".." << frame.hi
            << " on " << window.columns << " columns, log " << frame.log_y << ", " << before << " -> " << after
            << " points";
    }
    EXPECT_GT(reduced_somewhere, 100);
}

TEST(SeriesReduction, a_long_series_shrinks_to_a_few_points_per_column_and_keeps_its_spike) {
    RankSeries rs{0, {}};
    for (std::int64_t s = 0; s < 1'000'000; ++s) rs.points.push_back({s, std::sin(static_cast<double>(s) / 1000)});
    rs.points[654'321].value = 1e6;
    rs.points[123'456].value = std::numeric_limits<double>::quiet_NaN();
    std::vector<RankSeries> series{rs};
    reduce_series(series, SeriesWindow{std::nullopt, std::nullopt, 300, std::nullopt});
    const auto& kept = series[0].points;
    EXPECT_LE(kept.size(), 300u * 6);  // first/last/min/max of a smooth column coincide often
    EXPECT_GE(kept.size(), 300u * 2);
    bool spike = false, nan = false;
    for (const auto& p : kept)
        spike |= p.step == 654'321 && p.value == 1e6, nan |= p.step == 123'456 && std::isnan(p.value);
    EXPECT_TRUE(spike);
    EXPECT_TRUE(nan);
    EXPECT_EQ(kept.front().step, 0);
    EXPECT_EQ(kept.back().step, 999'999);
}

}  // namespace
}  // namespace msmon
