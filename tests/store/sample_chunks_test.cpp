// sample_chunk, the samples' storage: the codec keeps every value exactly (NaN, -0, ±inf, whole and fractional
// numbers, ids), and the writer + reader answer what a plain map of (tensor, step) → last written row answers,
// whatever the commits: repeats within and across commits, steps out of order, negative steps, restarts of the
// writer, a rolled-back commit. Real SQLite throughout.
#include "store/sample_chunks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "store/reader.hpp"
#include "store/schema.hpp"
#include "store/sqlite_ingest_store.hpp"
#include "tests/support/old_store.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

bool same_bits(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return std::memcmp(&a, &b, sizeof a) == 0;
}

void expect_same_row(const SampleRow& got, const SampleRow& want, const std::string& where) {
    EXPECT_EQ(got.tensor_id, want.tensor_id) << where;
    EXPECT_EQ(got.step, want.step) << where;
    EXPECT_EQ(got.layout_id, want.layout_id) << where;
    EXPECT_EQ(got.shape_id, want.shape_id) << where;
    EXPECT_EQ(got.dtype_id, want.dtype_id) << where;
    EXPECT_EQ(got.value_count, want.value_count) << where;
    for (int k = 0; k < kMaxNumericOps; ++k) {
        const double w = k < want.value_count ? want.values[k] : kNaN;
        EXPECT_TRUE(same_bits(got.values[k], w)) << where << " slot " << k << ": " << got.values[k] << " vs " << w;
    }
}

TEST(SampleChunks, codec_keeps_every_value_and_id_exactly) {
    const double values[] = {0.0,
                             -0.0,
                             1.0,
                             -1.0,
                             0.1,
                             -2.5e-300,
                             1e300,
                             kInf,
                             -kInf,
                             kNaN,
                             3.0,
                             9007199254740991.0,
                             9007199254740992.0,
                             -9007199254740993.0,
                             1e20,
                             4.9e-324,
                             123456.0,
                             -7.0};
    std::vector<SampleRow> rows;
    std::int64_t step = -70;
    std::size_t v = 0;
    for (int i = 0; i < 40; ++i) {
        SampleRow r;
        r.tensor_id = 7;
        r.step = step;
        step += 1 + i % 3 * 1000;  // small and large step gaps, negative to positive
        r.layout_id = i / 10 + 1;
        r.shape_id = i % 4 == 0 ? 0 : 100 + i % 3;
        r.dtype_id = i % 5 == 0 ? 0 : 200;
        r.value_count = i % (kMaxNumericOps + 1);
        for (int k = 0; k < r.value_count; ++k) r.values[k] = values[v++ % std::size(values)];
        rows.push_back(r);
    }
    rows.back().step = std::numeric_limits<std::int64_t>::max();  // the largest delta there is
    std::vector<const SampleRow*> ptrs;
    for (const auto& r : rows) ptrs.push_back(&r);
    const std::string bytes = encode_chunk(ptrs.data(), ptrs.size());
    std::vector<SampleRow> back;
    decode_chunk(bytes.data(), bytes.size(), 7, back);
    ASSERT_EQ(back.size(), rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) expect_same_row(back[i], rows[i], "row " + std::to_string(i));

    // Whole numbers are small: a row of six counts of 0 takes 2 (step, head) + 2 (tags) + 6 bytes.
    SampleRow zeros;
    zeros.value_count = 6;
    const SampleRow* z = &zeros;
    EXPECT_EQ(encode_chunk(&z, 1).size(), 10u);
}

TEST(SampleChunks, truncated_or_foreign_bytes_are_reported_not_read_past) {
    SampleRow r;
    r.step = 5;
    r.value_count = 4;
    for (int k = 0; k < 4; ++k) r.values[k] = 0.25 * k + 0.1;
    const SampleRow* p = &r;
    const std::string bytes = encode_chunk(&p, 1);
    for (std::size_t cut = 1; cut < bytes.size(); ++cut) {
        std::vector<SampleRow> out;
        EXPECT_THROW(decode_chunk(bytes.data(), cut, 1, out), SqliteError) << "cut at " << cut;
    }
    const std::string foreign = "\x02\xff\xff";
    std::vector<SampleRow> out;
    EXPECT_THROW(decode_chunk(foreign.data(), foreign.size(), 1, out), SqliteError);
}

// A store with one run and `tensors` tensors of one layout; rows go in through the real ingest store.
struct Fixture {
    TempDir dir;
    std::string db = dir / "s.db";
    std::map<std::pair<std::int64_t, std::int64_t>, SampleRow> truth;  // (tensor, step) → last written

    void keys(SqliteIngestStore& store, int tensors) {
        RecordBatch b;
        b.new_runs = {{1, 0, "/job/a-rank0-x", "a", "x", "msprobe"}};
        b.new_layouts = {{1, "min,max,norm,mean,nans,zeros"}};
        for (int t = 1; t <= tensors; ++t)
            b.new_tensors.push_back({t, 1, "grad_reduced", "0", "layer." + std::to_string(t), std::nullopt, 1});
        store.commit(b);
    }
    SampleRow row(std::int64_t tensor, std::int64_t step, std::mt19937& rng) {
        SampleRow r;
        r.tensor_id = tensor;
        r.step = step;
        r.layout_id = 1;
        r.value_count = 6;
        std::uniform_real_distribution<double> u(-3, 3);
        for (int k = 0; k < 4; ++k) r.values[k] = u(rng);
        r.values[4] = static_cast<double>(rng() % 3);
        r.values[5] = rng() % 7 == 0 ? kNaN : static_cast<double>(rng() % 100);
        return r;
    }
    void expect_matches(int tensors, const std::string& when) {
        Connection conn(db, Connection::Mode::read_only);
        SampleChunkReader reader(conn);
        std::vector<SampleRow> got;
        for (int t = 1; t <= tensors; ++t) {
            std::vector<const SampleRow*> want;
            for (auto it = truth.lower_bound({t, std::numeric_limits<std::int64_t>::min()});
                 it != truth.end() && it->first.first == t; ++it)
                want.push_back(&it->second);
            reader.read(t, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), got);
            ASSERT_EQ(got.size(), want.size()) << when << ", tensor " << t;
            for (std::size_t i = 0; i < got.size(); ++i)
                expect_same_row(got[i], *want[i], when + ", tensor " + std::to_string(t));
            if (want.empty()) {
                EXPECT_FALSE(reader.last_step(t).has_value());
                continue;
            }
            EXPECT_EQ(reader.last_step(t), want.back()->step) << when;
            // A window in the middle, crossing block edges.
            const std::int64_t lo = want[want.size() / 3]->step, hi = want[want.size() * 2 / 3]->step + 1;
            reader.read(t, lo, hi, got);
            std::size_t n = 0;
            for (const auto* w : want) n += w->step >= lo && w->step <= hi;
            EXPECT_EQ(got.size(), n) << when << ", window " << lo << ".." << hi;
            for (const auto& g : got) EXPECT_TRUE(g.step >= lo && g.step <= hi);
            std::vector<std::int64_t> recent;
            reader.recent_steps(t, 5, recent);
            ASSERT_EQ(recent.size(), std::min<std::size_t>(5, want.size())) << when;
            for (std::size_t i = 0; i < recent.size(); ++i)
                EXPECT_EQ(recent[i], want[want.size() - 1 - i]->step) << when;
        }
    }
};

TEST(SampleChunks, random_commits_with_repeats_out_of_order_steps_and_restarts_read_as_last_write_wins) {
    Fixture f;
    constexpr int kTensors = 6;
    std::mt19937 rng(11);
    std::size_t replaced = 0;
    for (int restart = 0; restart < 3; ++restart) {
        SqliteIngestStore store(f.db);
        if (restart == 0) f.keys(store, kTensors);
        for (int commit = 0; commit < 25; ++commit) {
            RecordBatch b;
            const int rows = 1 + static_cast<int>(rng() % 300);
            for (int i = 0; i < rows; ++i) {
                const std::int64_t tensor = 1 + static_cast<std::int64_t>(rng() % kTensors);
                // Mostly new steps going up; some repeats and late arrivals, some negative.
                const std::int64_t step = static_cast<std::int64_t>(rng() % 400) - 40;
                const SampleRow r = f.row(tensor, step, rng);
                if (f.truth.count({tensor, step})) ++replaced;
                f.truth[{tensor, step}] = r;
                b.rows.push_back(r);
            }
            store.commit(b);
        }
        f.expect_matches(kTensors, "after restart " + std::to_string(restart));
    }
    EXPECT_GT(replaced, 100u);  // the mix really did repeat steps
}

TEST(SampleChunks, a_live_run_ends_with_one_chunk_per_sealed_block) {
    Fixture f;
    constexpr int kTensors = 3;
    std::mt19937 rng(5);
    {
        SqliteIngestStore store(f.db);
        f.keys(store, kTensors);
        for (std::int64_t step = 0; step < 200; ++step) {  // one step per commit, as a live job writes
            RecordBatch b;
            for (int t = 1; t <= kTensors; ++t) {
                b.rows.push_back(f.row(t, step, rng));
                f.truth[{t, step}] = b.rows.back();
            }
            store.commit(b);
        }
    }
    f.expect_matches(kTensors, "live");
    Connection conn(f.db, Connection::Mode::read_only);
    Statement q(conn,
                "SELECT block, count(*), sum(n) FROM sample_chunk WHERE tensor_id = 1 GROUP BY block ORDER BY block");
    std::vector<std::array<std::int64_t, 3>> blocks;
    while (q.step()) blocks.push_back({q.int64(0), q.int64(1), q.int64(2)});
    ASSERT_EQ(blocks.size(), 4u);  // steps 0..199: blocks 0..3
    for (int b = 0; b < 3; ++b) {
        EXPECT_EQ(blocks[b][1], 1) << "sealed block " << b << " is one chunk";
        EXPECT_EQ(blocks[b][2], 64);
    }
    EXPECT_EQ(blocks[3][1], 200 - 192) << "the open block: one chunk per commit";
}

// A backlog read newest first: each tensor's newest step, then its history behind it a block at a time, into steps
// no stored chunk spans (written with no query: SampleChunkWriter's `fresh`). Rows that then meet stored ones (a
// step written again, a merge that moved a chunk's span, a restart that forgot what was written) are stored once.
TEST(SampleChunks, history_written_behind_the_newest_steps_then_rows_meeting_stored_ones_are_stored_once) {
    Fixture f;
    constexpr int kTensors = 3;
    std::mt19937 rng(7);
    const auto commit = [&](SqliteIngestStore& store, const std::vector<std::pair<int, std::int64_t>>& rows) {
        RecordBatch b;
        for (const auto& [t, step] : rows) {
            b.rows.push_back(f.row(t, step, rng));
            f.truth[{t, step}] = b.rows.back();
        }
        store.commit(b);
    };
    const auto stored_rows = [&](int t) {
        Connection conn(f.db, Connection::Mode::read_only);
        Statement q(conn, "SELECT sum(n) FROM sample_chunk WHERE tensor_id = ?");
        q.bind(1, static_cast<std::int64_t>(t));
        return q.step() ? q.int64(0) : -1;
    };
    const auto expect_once = [&](const std::string& when) {
        f.expect_matches(kTensors, when);
        for (int t = 1; t <= kTensors; ++t) {
            std::int64_t n = 0;
            for (const auto& [key, _] : f.truth) n += key.first == t;
            EXPECT_EQ(stored_rows(t), n) << when << ": tensor " << t << " holds a step twice";
        }
    };
    {
        SqliteIngestStore store(f.db);
        f.keys(store, kTensors);
        std::vector<std::pair<int, std::int64_t>> rows;
        for (int t = 1; t <= kTensors; ++t) rows.push_back({t, 399});  // the window: each tensor's newest step
        commit(store, rows);
        for (std::int64_t block = 0; block < 4; ++block) {  // the history, steps 0..255 (tensor 3: every 2nd)
            rows.clear();
            for (int t = 1; t <= kTensors; ++t)
                for (std::int64_t s = block * 64; s < block * 64 + 64; s += t == 3 ? 2 : 1) rows.push_back({t, s});
            commit(store, rows);
        }
        expect_once("history written behind");
        // Each tensor is still as the writer wrote it (nothing met a stored row yet); each case is one tensor's.
        // 1. Tensor 1: steps written again, behind the history's front, and the window's own step.
        commit(store, {{1, 100}, {1, 101}});
        commit(store, {{1, 399}});
        expect_once("steps written again");
        // 2. Tensor 2, between the history's front and the newest step: new steps, then one of them again.
        commit(store, {{2, 320}, {2, 321}});
        commit(store, {{2, 321}});
        expect_once("new steps, then again");
        // 3. Tensor 3 in block 4: rows 260 and 300, then 280 and 310 (merged: the chunk now spans 260-310, past the
        //    rows written behind so far), then 310 again.
        commit(store, {{3, 260}, {3, 300}});
        commit(store, {{3, 280}, {3, 310}});
        commit(store, {{3, 310}});
        expect_once("a merge moved a span");
    }
    {  // 4. A restart: nothing is known of what was written; steps again and new ones behind the newest.
        SqliteIngestStore store(f.db);
        commit(store, {{2, 200}, {2, 330}, {1, 320}});
        commit(store, {{2, 330}});
        expect_once("after a restart");
    }
}

TEST(SampleChunks, a_rolled_back_commit_leaves_the_writer_consistent_with_the_store) {
    Fixture f;
    std::mt19937 rng(3);
    SqliteIngestStore store(f.db);
    f.keys(store, 2);
    RecordBatch ok;
    for (std::int64_t s = 0; s < 10; ++s) {
        ok.rows.push_back(f.row(1, s, rng));
        f.truth[{1, s}] = ok.rows.back();
    }
    store.commit(ok);
    // Rows for steps 10..19, then a file offset the store refuses (a trigger planted for the test; file offsets
    // are written last): the whole commit is undone after its samples went in.
    {
        Connection planter(f.db, Connection::Mode::read_write_create);
        planter.exec(
            "CREATE TRIGGER refuse BEFORE INSERT ON file WHEN NEW.path = '/job/boom' BEGIN SELECT RAISE(ABORT, "
            "'boom'); "
            "END");
    }
    RecordBatch bad;
    for (std::int64_t s = 10; s < 20; ++s) bad.rows.push_back(f.row(1, s, rng));
    FileProgress broken;
    broken.id = 1;
    broken.run_id = 1;
    broken.path = "/job/boom";
    bad.files.push_back(broken);
    EXPECT_THROW(store.commit(bad), SqliteError);
    // Later commits answer to what the store holds, not to what the undone commit wrote.
    RecordBatch again;
    for (std::int64_t s : {12, 15}) {
        again.rows.push_back(f.row(1, s, rng));
        f.truth[{1, s}] = again.rows.back();
    }
    store.commit(again);
    f.expect_matches(2, "after rollback");
}

TEST(SampleChunks, a_version_4_store_is_upgraded_with_every_sample_kept) {
    Fixture f;
    std::mt19937 rng(9);
    {
        SqliteIngestStore store(f.db);
        f.keys(store, 2);
    }
    {
        // Make it look like a v4 store: the old table with rows, no sample_chunk.
        Connection conn(f.db, Connection::Mode::read_write_create);
        conn.exec("DROP TABLE sample_chunk");
        conn.exec("DROP TABLE ship_journal");  // schema 6 came later still
        conn.exec("DROP TABLE ship_mark");
        conn.exec(
            "CREATE TABLE sample(tensor_id INTEGER NOT NULL, step INTEGER NOT NULL, layout_id INTEGER NOT NULL, "
            "shape_id INTEGER, dtype_id INTEGER, v0 REAL, v1 REAL, v2 REAL, v3 REAL, v4 REAL, v5 REAL, v6 REAL, v7 "
            "REAL, "
            "PRIMARY KEY(tensor_id, step)) WITHOUT ROWID");
        Statement ins(conn, "INSERT INTO sample VALUES(?,?,1,NULL,NULL,?,?,?,?,?,?,NULL,NULL)");
        for (std::int64_t t = 1; t <= 2; ++t) {
            for (std::int64_t s = -5; s < 150; s += 1 + static_cast<std::int64_t>(rng() % 2)) {
                SampleRow r = f.row(t, s, rng);
                if (s == 7) r.values[0] = -0.0;
                ins.bind(1, t);
                ins.bind(2, s);
                for (int k = 0; k < 6; ++k) bind_value(ins.raw(), 3 + k, true, r.values[k]);
                ins.run();
                r.value_count = kValueColumns;  // the old table kept 8 slots; NULL read as NaN
                r.values[6] = r.values[7] = kNaN;
                f.truth[{t, s}] = r;
            }
        }
        rewrite_file_as_version_7(conn);
        conn.exec("PRAGMA user_version=4");
    }
    { SqliteIngestStore upgraded(f.db); }
    f.expect_matches(2, "after the upgrade");
    Connection conn(f.db, Connection::Mode::read_only);
    Statement gone(conn, "SELECT count(*) FROM sqlite_master WHERE name = 'sample'");
    ASSERT_TRUE(gone.step());
    EXPECT_EQ(gone.int64(0), 0);
}

// A row from a full-precision source (an event file) stays over a rounded one (a log line) of the
// same tensor and step, whichever is written first, in one commit or across commits and blocks; among rows of one
// precedence the last write wins. The Overview's per-rank aggregates follow what stays.
TEST(SampleChunks, a_full_precision_row_stays_over_a_rounded_one_whatever_the_order) {
    Fixture f;
    SqliteIngestStore store(f.db);
    f.keys(store, 2);
    auto value_row = [](std::int64_t tensor, std::int64_t step, double v, std::uint8_t precedence) {
        SampleRow r;
        r.tensor_id = tensor;
        r.step = step;
        r.layout_id = 1;
        r.value_count = 6;
        for (double& x : r.values) x = 0;
        r.values[2] = v;  // norm
        r.precedence = precedence;
        return r;
    };
    const double exact = 2.0922648906707764, rounded = 2.092265;
    // Tensor 1: the exact value first, the rounded later (another commit; a step in an earlier block, then the
    // newest). Tensor 2: the rounded first, then the exact. Step 200 in one commit both ways.
    for (std::int64_t step : {3, 130}) {
        RecordBatch a, b;
        a.rows = {value_row(1, step, exact, kFullPrecision), value_row(2, step, rounded, kRoundedText)};
        b.rows = {value_row(1, step, rounded, kRoundedText), value_row(2, step, exact, kFullPrecision)};
        store.commit(a);
        store.commit(b);
    }
    RecordBatch both;
    both.rows = {value_row(1, 200, exact, kFullPrecision), value_row(1, 200, rounded, kRoundedText),
                 value_row(2, 200, rounded, kRoundedText), value_row(2, 200, exact, kFullPrecision)};
    store.commit(both);
    RecordBatch same;  // one precedence: the later write wins
    same.rows = {value_row(1, 201, 1.5, kRoundedText)};
    store.commit(same);
    same.rows = {value_row(1, 201, 2.5, kRoundedText)};
    store.commit(same);
    Connection conn(f.db, Connection::Mode::read_only);
    SampleChunkReader reader(conn);
    std::vector<SampleRow> got;
    for (std::int64_t t : {1, 2}) {
        reader.read(t, 0, 300, got);
        ASSERT_EQ(got.size(), t == 1 ? 4u : 3u) << "tensor " << t;
        for (std::size_t i = 0; i < 3; ++i) {
            EXPECT_EQ(got[i].values[2], exact) << "tensor " << t << " step " << got[i].step;
            EXPECT_EQ(got[i].precedence, kFullPrecision);
        }
    }
    EXPECT_EQ(got.size(), 3u);
    reader.read(1, 201, 201, got);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].values[2], 2.5);
    // The Overview's aggregate (from rank_block, kept by the writer): norm over the rank's two tensors, the L2 of
    // what stays: sqrt(2 × exact²) at steps 3, 130 and 200 (rounded rows met exact ones and were dropped).
    RankSeriesRequest req;
    req.kind = "grad_reduced";
    req.op = "norm";
    const auto series = open_sqlite_reader(f.db)->rank_series(req);
    ASSERT_EQ(series.size(), 1u);
    std::map<std::int64_t, double> by_step;
    for (const auto& p : series[0].points) by_step[p.step] = p.value;
    for (std::int64_t step : {3, 130, 200}) EXPECT_DOUBLE_EQ(by_step[step], std::sqrt(2 * exact * exact)) << step;
}

}  // namespace
}  // namespace msmon::test
