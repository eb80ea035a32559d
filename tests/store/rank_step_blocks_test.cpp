// rank_block, the writer-kept per-rank step aggregates, must answer exactly what the raw samples answer: the
// oracle is Reader::rank_series with a name filter matching everything, which reads every raw row.
#include "store/rank_step_blocks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "store/reader.hpp"
#include "store/schema.hpp"
#include "store/sqlite_ingest_store.hpp"
#include "tests/support/old_store.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct StoreBuilder {
    SqliteIngestStore store;
    std::int64_t next_tensor = 1;
    explicit StoreBuilder(const std::string& path) : store(path) {}

    // Runs 1..3: ranks 0, 1 and a second run (restart) of rank 0. Layouts: 6 ops, and 3 ops with a shape.
    void keys() {
        RecordBatch b;
        b.new_runs = {{1, 0, "/job/a-rank0-x", "a", "x", "msprobe"},
                      {2, 1, "/job/a-rank1-x", "a", "x", "msprobe"},
                      {3, 0, "/job/b-rank0-y", "b", "y", "msprobe"}};
        b.new_layouts = {{1, "min,max,norm,mean,nans,zeros"}, {2, "norm,shape,max,min"}};
        for (std::int64_t run = 1; run <= 3; ++run)
            for (const char* kind : {"grad_reduced", "actv"})
                for (int p = 0; p < 3; ++p)
                    b.new_tensors.push_back({next_tensor++, run, kind, "0", "layer." + std::to_string(p), std::nullopt,
                                             std::string(kind) == "actv" ? 2 : 1});
        store.commit(b);
    }
};

SampleRow make_row(std::int64_t tensor, std::int64_t step, int layout, std::mt19937& rng) {
    SampleRow r;
    r.tensor_id = tensor;
    r.step = step;
    r.layout_id = layout;
    r.value_count = layout == 1 ? 6 : 3;
    std::uniform_real_distribution<double> u(-2, 2);
    for (int k = 0; k < r.value_count; ++k) r.values[k] = u(rng);
    return r;
}

void expect_same(Reader& reader, const std::string& kind, const std::string& op, std::int64_t last_steps) {
    auto fast = reader.rank_series({kind, op, std::nullopt, last_steps, {}});
    auto raw = reader.rank_series({kind, op, std::string(".*"), last_steps, {}});
    ASSERT_EQ(fast.size(), raw.size()) << kind << " " << op;
    std::size_t points = 0;
    for (std::size_t i = 0; i < raw.size(); ++i) {
        EXPECT_EQ(fast[i].rank, raw[i].rank);
        ASSERT_EQ(fast[i].points.size(), raw[i].points.size()) << kind << " " << op << " rank " << raw[i].rank;
        for (std::size_t j = 0; j < raw[i].points.size(); ++j) {
            const auto& a = fast[i].points[j];
            const auto& b = raw[i].points[j];
            EXPECT_EQ(a.step, b.step);
            if (std::isnan(b.value)) EXPECT_TRUE(std::isnan(a.value)) << kind << " " << op << " step " << b.step;
            else
                EXPECT_NEAR(a.value, b.value, 1e-12 * std::max(1.0, std::abs(b.value)))
                    << kind << " " << op << " step " << b.step;
            ++points;
        }
    }
    EXPECT_GT(points, 0u) << kind << " " << op;
}

void expect_all_same(Reader& reader) {
    for (const char* op : {"min", "max", "norm", "mean", "nans", "zeros"}) {
        expect_same(reader, "grad_reduced", op, 0);
        expect_same(reader, "grad_reduced", op, 5);
    }
    for (const char* op : {"norm", "max", "min"}) {
        expect_same(reader, "actv", op, 0);
        expect_same(reader, "actv", op, 70);
    }
}

TEST(RankStepBlocks, aggregates_equal_the_raw_rows_with_nan_repeats_restarts_and_many_blocks) {
    TempDir tmp;
    const std::string db = tmp / "s.db";
    std::mt19937 rng(7);
    {
        StoreBuilder b(db);
        b.keys();
        // Steps -3..199 over three commits (negative steps and block edges at 0, 64, 128 included), rows in file
        // order (all tensors of a step, then the next step).
        for (int part = 0; part < 3; ++part) {
            RecordBatch batch;
            for (int step = -3 + part * 68; step < -3 + (part + 1) * 68 && step < 200; ++step)
                for (std::int64_t t = 1; t < b.next_tensor; ++t) {
                    const bool actv = ((t - 1) / 3) % 2 == 1;
                    batch.rows.push_back(make_row(t, step, actv ? 2 : 1, rng));
                }
            batch.rows[17].values[2] = kNaN;  // a NaN norm: that step of that rank reads NaN
            batch.rows[40].values[0] = -0.0;
            b.store.commit(batch);
        }
        // Repeats: a later commit rewrites steps 10 and 130 of tensor 2 (last write wins), and one commit holds the
        // same (tensor, step) twice.
        RecordBatch again;
        again.rows.push_back(make_row(2, 10, 1, rng));
        again.rows.back().values[2] = 1000;
        again.rows.push_back(make_row(2, 130, 1, rng));
        for (int i = 0; i < 40; ++i) again.rows.push_back(make_row(5, 150, 1, rng));  // 40 writes of one row
        again.rows.push_back(make_row(2, 200, 1, rng));                               // a new step
        b.store.commit(again);
    }
    auto reader = open_sqlite_reader(db);
    expect_all_same(*reader);
    auto norm = reader->rank_series({"grad_reduced", "norm", std::nullopt, 0, {}});
    ASSERT_FALSE(norm.empty());
    EXPECT_EQ(norm[0].points.front().step, -3);
    EXPECT_EQ(norm[0].points.back().step, 200);
    const auto cat = reader->catalog();
    EXPECT_EQ(cat.min_step, -3);
    EXPECT_EQ(cat.max_step, 200);
}

TEST(RankStepBlocks, a_batch_larger_than_the_delta_bound_with_repeats_is_written_in_rounds_and_stays_exact) {
    TempDir tmp;
    const std::string db = tmp / "s.db";
    std::mt19937 rng(5);
    {
        StoreBuilder b(db);
        b.keys();
        // 30,000 steps × 3 tensors × 6 ops = 540,000 deltas: several rounds of 65,536. Steps 7 and 29,000 are
        // written twice in the batch (a replaced value), the second time after rounds have been written.
        RecordBatch batch;
        for (int step = 0; step < 30000; ++step)
            for (std::int64_t t = 1; t <= 3; ++t) batch.rows.push_back(make_row(t, step, 1, rng));
        batch.rows.push_back(make_row(2, 7, 1, rng));
        batch.rows.push_back(make_row(3, 29000, 1, rng));
        b.store.commit(batch);
    }
    auto reader = open_sqlite_reader(db);
    for (const char* op : {"min", "max", "norm", "mean", "nans", "zeros"}) expect_same(*reader, "grad_reduced", op, 0);
}

TEST(RankStepBlocks, a_store_written_before_rank_block_is_filled_when_opened) {
    TempDir tmp;
    const std::string db = tmp / "s.db";
    std::mt19937 rng(11);
    {
        StoreBuilder b(db);
        b.keys();
        RecordBatch batch;
        for (int step = 0; step < 90; ++step)
            for (std::int64_t t = 1; t < b.next_tensor; ++t)
                batch.rows.push_back(make_row(t, step, ((t - 1) / 3) % 2 == 1 ? 2 : 1, rng));
        b.store.commit(batch);
    }
    {
        // What a version-2 store looks like: no rank_block (nor the later anomaly tables).
        Connection c(db, Connection::Mode::read_write_create);
        c.exec("DROP TABLE rank_block");
        c.exec("DROP TABLE anomaly_group");
        c.exec("DROP TABLE anomaly_breadth");
        c.exec("DROP TABLE kind_range");
        c.exec("DROP INDEX tensor_by_kind_layout");
        c.exec("DROP TABLE ship_journal");  // schema 6 (the spool) came later still
        c.exec("DROP TABLE ship_mark");
        rewrite_samples_as_version_4(c);
        c.exec("PRAGMA user_version=2");
    }
    { SqliteIngestStore reopened(db); }
    auto reader = open_sqlite_reader(db);
    expect_all_same(*reader);
}

}  // namespace
}  // namespace msmon::test
