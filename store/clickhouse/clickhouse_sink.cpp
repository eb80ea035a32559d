// One round: reconcile with ClickHouse if the last round failed, then points, anomalies, events, checkpoints
// and the node's details (clickhouse_sink_details.cpp), each INSERT followed by its mark.
#include "store/clickhouse/clickhouse_sink.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <set>

#include "store/clickhouse/clickhouse_anomaly_row.hpp"
#include "store/clickhouse/clickhouse_schema.hpp"
#include "store/clickhouse/row_binary.hpp"
#include "store/stored_rows.hpp"

namespace msmon {

namespace {

std::int64_t scalar(const ClickHouseClient& client, const std::string& sql) {
    const std::string out = client.query(sql);
    return std::atoll(out.c_str());
}

}  // namespace

ClickHouseShipper::ClickHouseShipper(const std::string& store_path, ShipperOptions options)
    : options_(std::move(options)),
      client_(options_.target, options_.timeout),
      spool_(store_path),
      rank_steps_(store_path) {}

std::string ClickHouseShipper::destination(const ShipperOptions& o) {
    return o.target.text() + " job=" + o.job + " node=" + o.node;
}

void ClickHouseShipper::reconcile() {
    ensure_clickhouse_schema(client_);
    SpoolMark& m = *mark_;
    const std::string db = options_.target.database;
    const std::string mine = " WHERE job = " + ch_quote(options_.job) + " AND node = " + ch_quote(options_.node);
    const std::string spool = " AND spool = " + std::to_string(m.spool);
    bool moved = false;
    auto raise = [&](std::int64_t& mark, std::int64_t landed) {
        if (landed > mark) {
            mark = landed;
            moved = true;
        }
    };
    const std::int64_t before = m.points_seq;
    raise(m.points_seq, scalar(client_, "SELECT max(seq) FROM " + db + ".points" + mine + spool));
    if (m.points_seq > before) counters_.skipped_as_landed += static_cast<std::uint64_t>(m.points_seq - before);
    raise(m.anomaly_id, scalar(client_, "SELECT max(id) FROM " + db + ".anomalies" + mine + spool));
    raise(m.event_id, scalar(client_, "SELECT max(id) FROM " + db + ".events" + mine + spool));
    const std::int64_t gen = scalar(client_, "SELECT max(generation) FROM " + db + ".checkpoints" + mine);
    if (gen > m.checkpoint_gen) {
        m.checkpoint_gen = gen;
        m.checkpoint_hash = 0;  // not known which content that generation carried: send the current one again
        moved = true;
    }
    raise(m.issue_id, scalar(client_, "SELECT max(id) FROM " + db + ".issues" + mine + spool));
    const std::int64_t module_gen = scalar(client_, "SELECT max(generation) FROM " + db + ".modules" + mine);
    if (module_gen > m.module_gen) {
        m.module_gen = module_gen;
        m.module_hash = 0;  // as for checkpoints
        moved = true;
    }
    files_version_ =
        static_cast<std::uint64_t>(scalar(client_, "SELECT max(version) FROM " + db + ".node_files" + mine));
    files_shipped_.reset();  // one row, sent again after every reconcile
    if (moved) {
        spdlog::info("ship: ClickHouse already had this spool up to seq {} (anomaly {}, event {}, issue {})",
                     m.points_seq, m.anomaly_id, m.event_id, m.issue_id);
        spool_.advance(m);
    }
    reconciled_ = true;
}

bool ClickHouseShipper::ship_points() {
    SpoolMark& m = *mark_;
    RowBinaryWriter w;
    std::size_t n = 0;
    const std::string job = options_.job, node = options_.node;
    std::set<RankStepKey> touched;
    const std::int64_t last = spool_.points_after(m.points_seq, options_.max_values, [&](const SpoolPoint& p) {
        if (!p.is_text) touched.insert({std::string(p.kind), std::string(p.op), p.rank, p.step});
        w.str(job);
        w.str(node);
        w.u64(m.spool);
        w.u64(static_cast<std::uint64_t>(p.seq));
        w.i32(p.rank);
        w.str(p.run);
        w.str(p.kind);
        w.str(p.vpp_stage);
        w.str(p.name);
        w.i64(p.micro_step);
        w.i64(p.step);
        w.str(p.op);
        w.u8(static_cast<std::uint8_t>(p.op_ord));
        w.u64(static_cast<std::uint64_t>(p.tensor_id));
        w.u8(p.is_text ? 1 : 0);
        w.f64(p.value);
        w.str(p.text);
        ++n;
    });
    if (last == m.points_seq) return false;
    // The touched steps' aggregates first: if the points then fail, both are sent again; the other order could
    // leave points acknowledged and their aggregates never sent.
    ship_rank_steps(touched);
    if (n > 0) client_.insert(options_.target.database + ".points (" + kPointColumns + ")", w.data());
    m.points_seq = last;
    spool_.advance(m);
    counters_.values += n;
    if (n > 0) counters_.inserts += 1;
    return true;
}

void ClickHouseShipper::ship_rank_steps(const std::set<RankStepKey>& touched) {
    if (touched.empty()) return;
    // Newer wins in ReplacingMergeTree: the agent's clock, so a new store of the same node (its seq restarting
    // at 1) still replaces what an earlier one sent.
    const auto version = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
    RowBinaryWriter w;
    for (const auto& [key, agg] : rank_steps_.read(touched)) {
        w.str(options_.job);
        w.str(options_.node);
        w.i32(key.rank);
        w.str(key.kind);
        w.str(key.op);
        w.i64(key.step);
        w.f64(agg.acc);
        w.i64(agg.n);
        w.i64(agg.nans);
        w.u64(version);
    }
    if (!w.data().empty())
        client_.insert(options_.target.database + ".rank_steps (" + kRankStepColumns + ")", w.data());
}

void ClickHouseShipper::ship_anomalies() {
    SpoolMark& m = *mark_;
    while (true) {
        const auto batch = spool_.anomalies_after(m.anomaly_id, kRecordsPerInsert);
        if (batch.empty()) return;
        RowBinaryWriter w;
        for (const auto& [id, a] : batch) write_anomaly_row(w, options_.job, options_.node, m.spool, id, a);
        client_.insert(options_.target.database + ".anomalies (" + kAnomalyColumns + ")", w.data());
        m.anomaly_id = batch.back().id;
        spool_.advance(m);
        counters_.inserts += 1;
    }
}

void ClickHouseShipper::ship_events() {
    SpoolMark& m = *mark_;
    while (true) {
        const auto batch = spool_.events_after(m.event_id, kRecordsPerInsert);
        if (batch.empty()) return;
        RowBinaryWriter w;
        for (const auto& [id, e] : batch) {
            w.str(options_.job);
            w.str(options_.node);
            w.u64(m.spool);
            w.i64(id);
            w.i64(e.run_id);
            w.i32(e.rank);
            w.u8(e.step ? 1 : 0);
            w.i64(e.step.value_or(0));
            w.str(e.kind);
            w.str(e.time);
            w.str(e.message);
        }
        client_.insert(options_.target.database + ".events (" + kEventColumns + ")", w.data());
        m.event_id = batch.back().id;
        spool_.advance(m);
        counters_.inserts += 1;
    }
}

void ClickHouseShipper::ship_checkpoints() {
    SpoolMark& m = *mark_;
    std::uint64_t hash = 0;
    const auto all = spool_.checkpoints(hash);
    if (hash == m.checkpoint_hash || all.empty()) return;
    // The whole table as a new generation: readers take each node's latest (a checkpoint list is rewritten
    // whole).
    const std::int64_t gen = m.checkpoint_gen + 1;
    RowBinaryWriter w;
    for (const auto& c : all) {
        w.str(options_.job);
        w.str(options_.node);
        w.u64(static_cast<std::uint64_t>(gen));
        w.str(c.source_path);
        w.i64(c.position);
        w.str(c.name);
        w.i32(c.rank);
        w.i64(c.epoch);
        w.i64(c.step);
        w.i64(c.times);
        w.u8(c.healthy ? 1 : 0);
    }
    client_.insert(options_.target.database + ".checkpoints (" + kCheckpointColumns + ")", w.data());
    m.checkpoint_gen = gen;
    m.checkpoint_hash = hash;
    spool_.advance(m);
    counters_.inserts += 1;
}

bool ClickHouseShipper::ship_pending(std::string& error) {
    try {
        if (!mark_) mark_ = spool_.mark();
        if (!reconciled_) reconcile();
        while (ship_points()) {
        }
        ship_anomalies();
        ship_events();
        ship_checkpoints();
        ship_issues();
        ship_node_files();
        ship_modules();
        return true;
    } catch (const ClickHouseUnreachable& e) {
        error = e.what();
    } catch (const ClickHouseError& e) {
        error = e.what();
    } catch (const std::exception& e) {
        error = std::string("spool: ") + e.what();
        mark_.reset();  // re-read the marks from the store next time
    }
    // Whether the failed INSERT landed is unknown: ask ClickHouse before sending anything again.
    reconciled_ = false;
    counters_.failures += 1;
    return false;
}

}  // namespace msmon
