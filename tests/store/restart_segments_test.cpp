// A job that restarts trains some steps twice: msprobe writes new run folders that begin again at the resumed
// step. Each rank's runs are segments; for a step two runs hold, the later run's value is the one the Overview's
// per-rank series and the Chart's line show (from the writer's aggregates and from the raw samples alike),
// whichever order the folders were read in; the earlier run's stretch is marked abandoned; the restart is one,
// with the ranks, the step it resumed at and the step the job had reached.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "store/reader.hpp"
#include "store/schema.hpp"
#include "store/sqlite_ingest_store.hpp"
#include "tests/support/e2e_support.hpp"
#include "tests/support/old_store.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

// rank 0's grad_reduced norm per step, as the L2 of its tensors' norms, from the points of one run only.
std::map<std::int64_t, double> l2_of_run(Reader& reader, std::int64_t run_id) {
    std::map<std::int64_t, double> sq;
    PointFilter f;
    f.rank = 0;
    f.kind = "grad_reduced";
    f.op = "norm";
    reader.points(f, [&](const Point& p) {
        if (p.run_id == run_id && p.op == "norm") sq[p.step] += p.value * p.value;
    });
    for (auto& [_, v] : sq) v = std::sqrt(v);
    return sq;
}

std::map<std::int64_t, double> series_of_rank0(Reader& reader, bool raw) {
    RankSeriesRequest req;
    req.kind = "grad_reduced";
    req.op = "norm";
    if (raw) req.name_regex = ".";  // a name pattern: summed from the samples, not the writer's aggregates
    std::map<std::int64_t, double> out;
    for (const auto& rs : reader.rank_series(req))
        if (rs.rank == 0)
            for (const auto& p : rs.points) out[p.step] = p.value;
    return out;
}

void expect_latest_run_wins(const std::string& db) {
    auto reader = open_sqlite_reader(db);
    const auto segments = reader->run_segments();
    ASSERT_EQ(segments.size(), 4u);  // two ranks, a run before and after the restart each
    const RunSegment& before = segments[0];
    const RunSegment& after = segments[1];
    EXPECT_EQ(before.rank, 0);
    EXPECT_EQ(after.rank, 0);
    EXPECT_EQ(before.first_step, 0);
    EXPECT_EQ(before.last_step, 45) << "the job died after step 45";
    EXPECT_EQ(after.first_step, 40) << "and resumed at 40, its last checkpoint";
    EXPECT_EQ(after.last_step, 59);
    ASSERT_TRUE(before.retrained_from.has_value());
    EXPECT_EQ(*before.retrained_from, 40);
    EXPECT_FALSE(after.retrained_from.has_value());

    const auto restarts = restarts_of(segments);
    ASSERT_EQ(restarts.size(), 1u);
    EXPECT_EQ(restarts[0].resumed_at, 40);
    EXPECT_EQ(restarts[0].reached, 45);
    EXPECT_EQ(restarts[0].ranks, (std::vector<int>{0, 1}));

    const auto old_run = l2_of_run(*reader, before.run_id);
    const auto new_run = l2_of_run(*reader, after.run_id);
    for (const bool raw : {false, true}) {
        const auto shown = series_of_rank0(*reader, raw);
        ASSERT_EQ(shown.size(), 60u) << "one value per step, 0-59";
        for (std::int64_t step : {0, 20, 39}) EXPECT_NEAR(shown.at(step), old_run.at(step), 1e-9) << step;
        for (std::int64_t step = 40; step <= 45; ++step) {
            EXPECT_NEAR(shown.at(step), new_run.at(step), 1e-9) << "step " << step << (raw ? " (raw)" : " (blocks)");
            EXPECT_GT(std::abs(old_run.at(step) - new_run.at(step)), 1e-12) << "the runs differ at " << step;
        }
        for (std::int64_t step : {46, 59}) EXPECT_NEAR(shown.at(step), new_run.at(step), 1e-9) << step;
    }
}

std::string simulate_restart(const TempDir& tmp) {
    const auto r = run({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--params", "4", "--steps", "60",
                        "--faults", "restart@45"},
                       isolated_env(tmp));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return tmp / "job";
}

TEST(RestartSegments, the_later_run_counts_for_steps_trained_twice_read_in_one_pass) {
    TempDir tmp;
    const std::string job = simulate_restart(tmp);
    const auto r = run({program("msmon"), "ingest", job, "--db", tmp / "s.db"}, isolated_env(tmp));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_latest_run_wins(tmp / "s.db");
}

TEST(RestartSegments, the_later_run_counts_whichever_run_was_read_first) {
    for (const bool new_first : {false, true}) {
        TempDir tmp;
        const std::string job = simulate_restart(tmp);
        // Hold back one run's folders; ingest; put them back; ingest again.
        std::vector<std::string> folders;
        for (const auto& e : std::filesystem::directory_iterator(job + "/monitor_output"))
            folders.push_back(e.path().filename().string());
        std::sort(folders.begin(), folders.end());  // the earlier time label first
        std::filesystem::create_directories(tmp / "held");
        for (const auto& f : folders) {
            const bool is_new = f.substr(0, 14) != folders.front().substr(0, 14);  // a later time label
            if (is_new != new_first) std::filesystem::rename(job + "/monitor_output/" + f, tmp / ("held/" + f));
        }
        auto r = run({program("msmon"), "ingest", job, "--db", tmp / "s.db"}, isolated_env(tmp));
        ASSERT_EQ(r.exit_code, 0) << r.err;
        for (const auto& e : std::filesystem::directory_iterator(tmp / "held"))
            std::filesystem::rename(e.path(), job + "/monitor_output/" + e.path().filename().string());
        r = run({program("msmon"), "ingest", job, "--db", tmp / "s.db"}, isolated_env(tmp));
        ASSERT_EQ(r.exit_code, 0) << r.err;
        SCOPED_TRACE(new_first ? "the restarted run read first" : "the first run read first");
        expect_latest_run_wins(tmp / "s.db");
    }
}

// A version 8 store (no run_range; its per-rank aggregates summed both runs at a step trained twice): read only,
// the segments come from the chunks; opened by a writer, run_range is filled and the steps trained twice are
// rebuilt from the later run.
TEST(RestartSegments, a_version_8_store_is_read_as_it_is_and_upgraded_with_its_restarted_steps_rebuilt) {
    TempDir tmp;
    const std::string job = simulate_restart(tmp);
    const std::string db = tmp / "s.db";
    ASSERT_EQ(run({program("msmon"), "ingest", job, "--db", db}, isolated_env(tmp)).exit_code, 0);
    {
        Connection c(db, Connection::Mode::read_write_create);
        rewrite_as_version_8(c);
        // Forget the aggregates: only the upgrade's rebuild of the steps two runs hold can bring those back.
        c.exec("DELETE FROM rank_block; PRAGMA user_version=8");
    }
    ASSERT_EQ(open_sqlite_reader(db)->run_segments().size(), 4u) << "a version 8 store, read only";
    { SqliteIngestStore upgraded(db); }
    std::string error;
    EXPECT_EQ(sqlite_rows(db, "PRAGMA user_version", error).at(0).at(0), std::to_string(kSchemaVersion));
    EXPECT_EQ(sqlite_rows(db, "SELECT count(*) FROM run_range", error).at(0).at(0), "4") << error;
    auto reader = open_sqlite_reader(db);
    const auto segments = reader->run_segments();
    const auto shown = series_of_rank0(*reader, false);
    const auto new_run = l2_of_run(*reader, segments[1].run_id);
    ASSERT_EQ(shown.size(), 6u) << "steps 40-45 rebuilt, nothing else (the test dropped the rest)";
    for (std::int64_t step = 40; step <= 45; ++step) EXPECT_NEAR(shown.at(step), new_run.at(step), 1e-9) << step;
}

}  // namespace
}  // namespace msmon::test

namespace msmon::test {
namespace {

RunSegment segment(std::int64_t id, int rank, const std::string& format, const std::string& label, std::int64_t first,
                   std::int64_t last) {
    RunSegment s;
    s.run_id = id;
    s.rank = rank;
    s.format = format;
    s.time_label = label;
    s.first_step = first;
    s.last_step = last;
    return s;
}

// One restart that msprobe's folders and MindFormers' relaunch both show is listed once; a store from before
// relaunches had runs of their own still lists the relaunch its log's start events show.
TEST(JobRestarts, a_restart_two_formats_saw_is_one_and_log_events_fill_in_for_old_stores) {
    std::vector<RunSegment> segs = {segment(1, 0, "msprobe", "Nov26_10-00-00", 0, 45),
                                    segment(2, 0, "msprobe", "Nov26_10-05-00", 41, 59),
                                    segment(3, 0, "mindformers", "", 1, 45),
                                    segment(4, 0, "mindformers", "2026-11-26 02:05:00,000", 41, 60),
                                    segment(5, 1, "msprobe", "Nov26_10-00-00", 0, 45),
                                    segment(6, 1, "msprobe", "Nov26_10-05-00", 41, 59),
                                    segment(7, 1, "mindformers", "", 1, 45),
                                    segment(8, 1, "mindformers", "2026-11-26 02:05:00,000", 41, 60)};
    order_segments(segs);
    EventRecord start;
    start.rank = 0;
    start.kind = "start";
    start.step = 45;
    const auto both = job_restarts(segs, {start});
    ASSERT_EQ(both.size(), 1u);
    EXPECT_EQ(both[0].resumed_at, 41);
    EXPECT_EQ(both[0].reached, 45);
    EXPECT_EQ(both[0].ranks, (std::vector<int>{0, 1}));
    EXPECT_FALSE(both[0].from_log);

    std::vector<RunSegment> old_store = {segment(3, 0, "mindformers", "", 1, 60)};
    order_segments(old_store);
    const auto from_log = job_restarts(old_store, {start});
    ASSERT_EQ(from_log.size(), 1u);
    EXPECT_TRUE(from_log[0].from_log);
    EXPECT_EQ(from_log[0].reached, 45);
}

// Runs sort by their folder's time, not its text: December after November, a relaunch after the first launch.
TEST(JobRestarts, runs_order_by_time_not_by_label_text) {
    EXPECT_LT(run_order("Nov30_23-59-59", 9), run_order("Dec01_00-00-00", 1));
    EXPECT_LT(run_order("", 9), run_order("2026-11-26 02:05:00,000", 1));
    EXPECT_LT(run_order("2026-11-26 02:05:00,000", 9), run_order("2026-11-26 02:05:00,001", 1));
    EXPECT_LT(run_order("2026-11-26 23:59:59,999", 9), run_order("2026-12-01 00:00:00,000", 1));
}

}  // namespace
}  // namespace msmon::test
