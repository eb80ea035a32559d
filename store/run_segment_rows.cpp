// Runs as segments, from SQL.
#include "store/run_segment_rows.hpp"

namespace msmon {

std::vector<RunSegment> read_run_segments(Connection& conn, bool has_run_range) {
    Statement q(conn, has_run_range
                          ? "SELECT r.id, r.rank, r.format, r.path, r.time_label, g.first_step, g.last_step FROM run r "
                            "JOIN run_range g ON g.run_id = r.id"
                          : "SELECT r.id, r.rank, r.format, r.path, r.time_label, min(s.first_step), max(s.last_step) "
                            "FROM run r JOIN tensor t ON t.run_id = r.id JOIN sample_chunk s ON s.tensor_id = t.id "
                            "GROUP BY r.id");
    std::vector<RunSegment> out;
    while (q.step()) {
        RunSegment seg;
        seg.run_id = q.int64(0);
        seg.rank = static_cast<int>(q.int64(1));
        seg.format = q.text(2);
        seg.path = q.text(3);
        seg.time_label = q.text(4);
        seg.first_step = q.int64(5);
        seg.last_step = q.int64(6);
        out.push_back(std::move(seg));
    }
    order_segments(out);
    return out;
}

}  // namespace msmon
