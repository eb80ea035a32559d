// The Chart view reads only what its plot's pixel columns draw (store/series_reduction.hpp). Before its first
// frame it does not know that width: it guesses, draws, asks for a reload, and from then on draws exactly what a
// read of every step draws — at any size, after a resize too. The store is real (msmon simulate + ingest); the
// reference view reads the same store with the window cleared.
#include <gtest/gtest.h>

#include "store/reader.hpp"
#include "tests/support/chart_render.hpp"
#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"
#include "tui/views/chart_view.hpp"

namespace msmon::test {
namespace {

// The real store, every rank_series read at every step.
class EveryStepReader final : public Reader {
public:
    explicit EveryStepReader(Reader& r) : r_(r) {}
    std::vector<RankSeries> rank_series(const RankSeriesRequest& req) override {
        RankSeriesRequest every = req;
        every.window = {};
        return r_.rank_series(every);
    }
    void points(const PointFilter& f, const std::function<void(const Point&)>& s) override { r_.points(f, s); }
    StoreSummary summary() override { return r_.summary(); }
    std::vector<IssueRecord> issues(std::size_t n) override { return r_.issues(n); }
    std::vector<AnomalyRecord> anomalies(const AnomalyFilter& f) override { return r_.anomalies(f); }
    AnomalyGroupPage anomaly_groups(const AnomalyGroupRequest& q) override { return r_.anomaly_groups(q); }
    AnomalyMarks anomaly_marks(double s, std::int64_t f) override { return r_.anomaly_marks(s, f); }
    std::vector<EventRecord> events() override { return r_.events(); }
    std::vector<RunConfigEntry> run_config(std::optional<int> rank) override { return r_.run_config(rank); }
    std::vector<CheckpointRecord> checkpoints() override { return r_.checkpoints(); }
    StoreCatalog catalog() override { return r_.catalog(); }
    std::vector<std::pair<int, std::int64_t>> rank_last_steps() override { return r_.rank_last_steps(); }
    ModuleInfo module_info(int rank, const std::string& name) override { return r_.module_info(rank, name); }
    std::vector<std::int64_t> collected_steps(std::size_t n) override { return r_.collected_steps(n); }
    std::vector<RunSegment> run_segments() override { return r_.run_segments(); }
    std::vector<StepWallTime> step_times() override { return r_.step_times(); }

private:
    Reader& r_;
};

tui::ScreenBuffer frame(tui::ChartView& view, int width, int height) {
    tui::ScreenBuffer buf(width, height);
    view.draw(buf, 0, 0, width, height, tui::Glyphs{});
    return buf;
}

TEST(ChartViewWidth, after_its_first_frame_the_chart_draws_exactly_what_every_step_draws) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    auto sim = run({program("msmon"), "simulate", tmp / "job", "--ranks", "3", "--steps", "2500", "--params", "2",
                    "--faults", "spike@1700:r1x1000,nan@2100:r2"},
                   env);
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    auto ingest = run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "store.db"}, env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    auto store = open_sqlite_reader(tmp / "store.db");
    EveryStepReader every(*store);

    tui::SharedSelection shared_a, shared_b;
    tui::ChartView chart(shared_a), reference(shared_b);
    for (const auto& [width, height] : {std::pair{100, 30}, std::pair{143, 41}, std::pair{61, 17}}) {
        chart.collect(*store);
        frame(chart, width, height);  // from the first read's guess, or the previous size
        ASSERT_TRUE(chart.wants_reload()) << "drawn on " << width << " cells from a read for another width";
        chart.collect(*store);
        const auto exact = frame(chart, width, height);
        EXPECT_FALSE(chart.wants_reload());
        reference.collect(every);
        EXPECT_EQ(first_difference(exact, frame(reference, width, height)), "") << width << "x" << height;
        EXPECT_NE(exact.to_text().find("!"), std::string::npos) << "the NaN mark\n" << exact.to_text();
    }
}

}  // namespace
}  // namespace msmon::test
