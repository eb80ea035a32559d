// Drawing benchmark: 1024 ranks × 10,000 steps (fixed random walks with spikes, NaN and Inf) turned into one
// frame of the Overview — sparklines (300 columns, the 90 rows that fit) or a heatmap of all ranks (300×90) —
// and a Braille chart of 8 ranks. Each frame includes the downsampling the view would do.
// Run: render_bench --benchmark_format=json [--benchmark_repetitions=10
// --benchmark_report_aggregates_only=true]
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "tui/screen_buffer.hpp"
#include "tui/views/anomalies_view.hpp"
#include "tui/views/overview_view.hpp"
#include "tui/widgets/braille_chart.hpp"
#include "tui/widgets/downsample.hpp"
#include "tui/widgets/heatmap.hpp"
#include "tui/widgets/sparkline.hpp"

using namespace msmon::tui;

namespace {

constexpr int kRanks = 1024;
constexpr int kSteps = 10000;
constexpr int kWidth = 300;
constexpr int kHeight = 90;

// Built once: a grad-norm-like random walk per rank, a few spikes each, NaN in some ranks, Inf in two.
const std::vector<std::vector<SeriesPoint>>& ranks() {
    static const std::vector<std::vector<SeriesPoint>> data = [] {
        std::mt19937_64 rng(20240601);
        std::normal_distribution<double> noise(0.0, 0.02);
        std::uniform_int_distribution<int> any_step(0, kSteps - 1);
        std::vector<std::vector<SeriesPoint>> out(kRanks);
        for (int r = 0; r < kRanks; ++r) {
            auto& series = out[static_cast<std::size_t>(r)];
            series.reserve(kSteps);
            double level = 1.0 + 0.001 * r;
            for (int s = 0; s < kSteps; ++s) {
                level = std::max(0.05, level + noise(rng));
                series.push_back({s, level * (1.0 + 0.1 * std::sin(s / 50.0))});
            }
            for (int k = 0; k < 3; ++k) series[static_cast<std::size_t>(any_step(rng))].value *= 100.0;
            if (r % 97 == 0)
                series[static_cast<std::size_t>(any_step(rng))].value = std::numeric_limits<double>::quiet_NaN();
            if (r == 300 || r == 700)
                series[static_cast<std::size_t>(any_step(rng))].value = std::numeric_limits<double>::infinity();
        }
        return out;
    }();
    return data;
}

std::vector<std::vector<ColumnStat>> downsample_all(int columns) {
    std::vector<std::vector<ColumnStat>> rows;
    rows.reserve(kRanks);
    for (const auto& series : ranks()) rows.push_back(downsample_minmax(series, 0, kSteps - 1, columns));
    return rows;
}

// Overview as sparklines: every rank downsampled (the view sorts by value), the rows that fit drawn.
void BM_SparklineFrame(benchmark::State& state) {
    const Glyphs glyphs{true, true};
    ScreenBuffer buf(kWidth, kHeight);
    ranks();
    for (auto _ : state) {
        buf.clear();
        const auto rows = downsample_all(kWidth);
        for (int y = 0; y < kHeight; ++y)
            draw_sparkline(buf, 0, y, kWidth, rows[static_cast<std::size_t>(y)], glyphs, SparklineOptions{});
        benchmark::DoNotOptimize(buf.at(kWidth - 1, kHeight - 1));
    }
    state.counters["points_per_frame"] = static_cast<double>(kRanks) * kSteps;
}

// Overview as a heatmap of all 1024 ranks (about 11 ranks per screen row), downsampling included.
void BM_HeatmapFrame(benchmark::State& state) {
    const Glyphs glyphs{true, true};
    ScreenBuffer buf(kWidth, kHeight);
    ranks();
    for (auto _ : state) {
        buf.clear();
        const auto rows = downsample_all(kWidth);
        draw_heatmap(buf, 0, 0, kWidth, kHeight, rows, glyphs, HeatmapOptions{});
        benchmark::DoNotOptimize(buf.at(kWidth - 1, kHeight - 1));
    }
}

// The heatmap's drawing alone, from columns already downsampled (a redraw without new data).
void BM_HeatmapDrawOnly(benchmark::State& state) {
    const Glyphs glyphs{true, true};
    ScreenBuffer buf(kWidth, kHeight);
    const auto rows = downsample_all(kWidth);
    for (auto _ : state) {
        draw_heatmap(buf, 0, 0, kWidth, kHeight, rows, glyphs, HeatmapOptions{});
        benchmark::DoNotOptimize(buf.at(kWidth - 1, kHeight - 1));
    }
}

// Chart view: 8 ranks of 10,000 steps with the smoothed line over a faint raw one, into 300×90.
void BM_BrailleChartFrame(benchmark::State& state) {
    const Glyphs glyphs{true, true};
    ScreenBuffer buf(kWidth, kHeight);
    const Color colours[] = {Color::series0, Color::series1, Color::series2, Color::series3,
                             Color::series4, Color::series5, Color::series0, Color::series1};
    ChartOptions options;
    options.step_lo = 0;
    options.step_hi = kSteps - 1;
    options.cursor_step = kSteps / 2;
    options.title = "grad_norm";
    for (auto _ : state) {
        std::vector<ChartSeries> series;
        for (int r = 0; r < 8; ++r) {
            const auto& raw = ranks()[static_cast<std::size_t>(r * 97)];
            series.push_back({"", raw, {colours[r]}, true});
            series.push_back({"rank " + std::to_string(r * 97), smooth_debiased_ema(raw, 0.9), {colours[r]}, false});
        }
        draw_chart(buf, 0, 0, kWidth, kHeight, series, options, glyphs);
        benchmark::DoNotOptimize(buf.at(kWidth - 1, kHeight - 1));
    }
}

}  // namespace

// The Overview view itself — the code msmon-tui runs for a frame — on a model of 1024 ranks × 10,000 steps in a
// 300×90 terminal: more ranks than rows, so the heatmap of every rank over the last steps that fit.
void BM_OverviewViewFrame(benchmark::State& state) {
    static const OverviewModel model = [] {
        OverviewModel m;
        m.selection = {"grad_reduced", "norm", std::nullopt};
        for (int r = 0; r < kRanks; ++r) {
            OverviewRow row;
            row.rank = r;
            for (const auto& p : ranks()[static_cast<std::size_t>(r)]) row.points.push_back({p.step, p.value});
            row.latest = row.points.back().value;
            row.min = 0;
            row.max = 2;
            m.rows.push_back(std::move(row));
        }
        m.step_lo = 0;
        m.step_hi = kSteps - 1;
        m.catalog.ranks.resize(kRanks);
        return m;
    }();
    SharedSelection shared;
    msmon::IncidentIndex incidents;
    OverviewView view(shared, incidents, [] {});
    view.set_model(model);
    ScreenBuffer buf(kWidth, kHeight);
    Glyphs glyphs;
    for (auto _ : state) {
        buf.clear();
        view.draw(buf, 0, 1, kWidth, kHeight - 3, glyphs);
        benchmark::DoNotOptimize(buf.at(0, 0));
    }
}

// The Anomalies view with 10,000 anomalies (64 ranks, 2,000 tensors, 6 rules): one iteration = sort by the next
// column, filter (rule, then none), regroup and redraw a 300×90 frame — what a key press costs.
void BM_AnomaliesSortFilterRedraw(benchmark::State& state) {
    static const std::vector<msmon::AnomalyRecord> list = [] {
        std::vector<msmon::AnomalyRecord> out;
        std::mt19937_64 rng(7);
        const char* rules[] = {"AnomalyTurbulence", "AnomalyNan",        "CrossRankOutlier",
                               "GlobalNormSpike",   "EmbeddingNormHigh", "StalledRank"};
        for (int i = 0; i < 10000; ++i) {
            msmon::AnomalyRecord a;
            a.source = i % 3 ? "detected" : "msprobe";
            a.rule = rules[rng() % 6];
            a.rank = static_cast<int>(rng() % 64);
            a.step = static_cast<std::int64_t>(rng() % 5000);
            a.kind = i % 2 ? "grad_reduced" : "actv";
            a.name = "module.module.decoder.layers." + std::to_string(rng() % 2000) + ".mlp.linear_fc1.weight";
            a.op = i % 4 ? "norm" : "mean";
            a.value = static_cast<double>(rng() % 1000) / 7.0;
            a.reference = 1.0;
            a.tag_name = "0:" + a.name + "/rank" + std::to_string(a.rank) + "/post_grad";
            a.message = "Rule " + a.rule + " reports anomaly signal";
            a.score = static_cast<double>(rng() % 100);
            out.push_back(std::move(a));
        }
        return out;
    }();
    SharedSelection shared;
    msmon::IncidentIndex incidents;
    AnomaliesView view(shared, incidents, [] {});
    view.set_list(list);
    ScreenBuffer buf(kWidth, kHeight);
    Glyphs glyphs;
    int i = 0;
    for (auto _ : state) {
        view.options().sort = static_cast<AnomalySort>(i % 9);
        view.options().filter.rule = i % 2 ? std::optional<std::string>("AnomalyNan") : std::nullopt;
        view.rebuild();
        buf.clear();
        view.draw(buf, 0, 1, kWidth, kHeight - 3, glyphs);
        benchmark::DoNotOptimize(buf.at(0, 1));
        ++i;
    }
}

BENCHMARK(BM_OverviewViewFrame)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AnomaliesSortFilterRedraw)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SparklineFrame)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HeatmapFrame)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HeatmapDrawOnly)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BrailleChartFrame)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
