// anomaly_group and anomaly_breadth upkeep, in the commit's transaction.
#include "store/anomaly_groups.hpp"

#include <algorithm>
#include <cmath>

namespace msmon {

double anomaly_rank_score(double score, std::int64_t breadth) {
    return score > 0 ? score + 5.0 * std::log10(static_cast<double>(breadth)) : 0;
}

AnomalyGroupWriter::AnomalyGroupWriter(Connection& conn)
    : group_(
          conn,
          "INSERT INTO anomaly_group(source, rule, rank, kind, name, op, count, first_step, last_step, face_id, best) "
          "VALUES(?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?7, ?8, -1) ON CONFLICT(source, rule, rank, kind, name, op) DO "
          "UPDATE SET count = count + 1, first_step = min(first_step, excluded.first_step), last_step = "
          "max(last_step, excluded.last_step)"),
      breadth_(
          conn,
          "INSERT INTO anomaly_breadth(step, rank, n, max_score) VALUES(?2, ?1, ?3, ?4) ON CONFLICT(step, rank) DO "
          "UPDATE SET n = n + excluded.n, max_score = max(max_score, excluded.max_score) RETURNING n"),
      members_(conn, "SELECT id, source, rule, kind, name, op, score FROM anomaly WHERE step = ? AND rank = ?"),
      // Highest rank score wins; on a tie the earliest anomaly, as a stable in-memory sort would keep it.
      face_(conn,
            "UPDATE anomaly_group SET best = ?1, face_id = ?2 WHERE source = ?3 AND rule = ?4 AND rank = ?5 AND kind = "
            "?6 AND name = ?7 AND op = ?8 AND (?1 > best OR (?1 = best AND ?2 < face_id))") {}

void AnomalyGroupWriter::add(std::int64_t id, const AnomalyRecord& a) {
    group_.reset();
    group_.bind(1, std::string_view(a.source));
    group_.bind(2, std::string_view(a.rule));
    group_.bind(3, a.rank);
    group_.bind(4, std::string_view(a.kind));
    group_.bind(5, std::string_view(a.name));
    group_.bind(6, std::string_view(a.op));
    group_.bind(7, a.step);
    group_.bind(8, id);
    group_.run();
    Touched& t = touched_[{a.rank, a.step}];
    t.max_score = t.added == 0 ? a.score : std::max(t.max_score, a.score);
    ++t.added;
}

void AnomalyGroupWriter::flush() {
    for (const auto& [key, touched] : touched_) {
        const auto& [rank, step] = key;
        breadth_.reset();
        breadth_.bind(1, rank);
        breadth_.bind(2, step);
        breadth_.bind(3, touched.added);
        breadth_.bind(4, touched.max_score);
        breadth_.step();
        const std::int64_t breadth = breadth_.int64(0);
        breadth_.reset();
        members_.reset();
        members_.bind(1, step);
        members_.bind(2, rank);
        while (members_.step()) {
            face_.reset();
            face_.bind(1, anomaly_rank_score(members_.real(6), breadth));
            face_.bind(2, members_.int64(0));
            face_.bind(3, std::string_view(members_.text(1)));  // source
            face_.bind(4, std::string_view(members_.text(2)));  // rule
            face_.bind(5, rank);
            face_.bind(6, std::string_view(members_.text(3)));  // kind
            face_.bind(7, std::string_view(members_.text(4)));  // name
            face_.bind(8, std::string_view(members_.text(5)));  // op
            face_.run();
        }
        members_.reset();
    }
    touched_.clear();
}

}  // namespace msmon
