// Latest values come from one index seek per tensor (max(step) on the (tensor_id, step) key); anomaly counts
// from anomaly_group (one row per rule, rank and series), not from every stored anomaly.
#include "store/prom_gauges.hpp"

#include <map>

#include "store/sample_chunks.hpp"
#include "store/schema.hpp"

namespace msmon {

PromGaugeCollector::PromGaugeCollector(const std::string& store_path, std::string job, std::string node)
    : conn_(store_path, Connection::Mode::read_only), job_(std::move(job)), node_(std::move(node)) {
    configure_connection(conn_, false);
}

JobGauges PromGaugeCollector::collect() {
    conn_.exec("BEGIN");
    struct Guard {
        Connection& c;
        ~Guard() { sqlite3_exec(c.raw(), "COMMIT", nullptr, nullptr, nullptr); }
    } guard{conn_};
    std::map<int, RankGauges> ranks;
    auto at = [&](int rank) -> RankGauges& {
        RankGauges& r = ranks[rank];
        r.rank = rank;
        return r;
    };
    Statement last(
        conn_,
        "SELECT r.rank, max((SELECT max(s.last_step) FROM sample_chunk s WHERE s.tensor_id = t.id AND s.block = "
        "(SELECT max(block) FROM sample_chunk WHERE tensor_id = t.id))) FROM tensor t JOIN run r ON r.id = t.run_id "
        "GROUP BY r.rank");
    const auto now = std::chrono::steady_clock::now();
    while (last.step()) {
        if (last.is_null(1)) continue;
        RankGauges& r = at(static_cast<int>(last.int64(0)));
        r.last_step = last.int64(1);
        auto& seen = step_seen_[r.rank];
        if (seen.second == std::chrono::steady_clock::time_point() || seen.first != *r.last_step) {
            seen = {*r.last_step, now};
            const auto seeded = seeded_.find(r.rank);
            if (seeded != seeded_.end() && seeded->second.step == *r.last_step) {
                const double ago =
                    std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() -
                    seeded->second.unix_seconds;
                if (ago > 0)
                    seen.second = now - std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                            std::chrono::duration<double>(ago));
            }
            seeded_.erase(r.rank);
        }
        r.seconds_since_step = std::chrono::duration<double>(now - seen.second).count();
    }
    // MindFormers scalars: op "value" is the row's first slot (v0).
    Statement scalars(conn_,
                      "SELECT r.rank, t.kind, t.id FROM tensor t JOIN run r ON r.id = t.run_id WHERE t.kind IN "
                      "('loss', 'global_norm') AND t.name = ''");
    SampleChunkReader chunks(conn_);
    std::vector<SampleRow> rows;
    std::map<std::pair<int, bool>, std::int64_t> latest_step;  // (rank, is loss) → step of the value kept
    while (scalars.step()) {
        const std::int64_t tensor = scalars.int64(2);
        const auto last_step = chunks.last_step(tensor);
        if (!last_step) continue;
        chunks.read(tensor, *last_step, *last_step, rows);
        if (rows.empty()) continue;
        const int rank = static_cast<int>(scalars.int64(0));
        const bool is_loss = scalars.text(1) == "loss";
        // Of several runs of one rank (restarts), the latest step wins.
        auto [it, fresh] = latest_step.try_emplace({rank, is_loss}, *last_step);
        if (!fresh && it->second > *last_step) continue;
        it->second = *last_step;
        RankGauges& r = at(rank);
        (is_loss ? r.loss : r.global_norm) = rows.front().values[0];  // op "value": the row's first slot
    }
    Statement anomalies(conn_, "SELECT rank, rule, sum(count) FROM anomaly_group GROUP BY rank, rule");
    while (anomalies.step())
        at(static_cast<int>(anomalies.int64(0))).anomalies_by_rule[anomalies.text(1)] = anomalies.int64(2);
    Statement checkpoints(conn_,
                          "SELECT rank, step, healthy FROM checkpoint ORDER BY rank, step, source_path, position");
    while (checkpoints.step()) {
        RankGauges& r = at(static_cast<int>(checkpoints.int64(0)));
        const bool healthy = checkpoints.int64(2) != 0;
        ++r.checkpoints;
        if (!healthy) ++r.unhealthy_checkpoints;
        r.latest_checkpoint_healthy = healthy;
    }
    JobGauges g;
    g.job = job_;
    g.node = node_;
    for (auto& [_, r] : ranks) g.ranks.push_back(std::move(r));
    g.updated_unix_seconds = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    return g;
}

}  // namespace msmon
