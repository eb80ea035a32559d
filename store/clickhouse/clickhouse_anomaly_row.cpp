// kAnomalyColumns' order.
#include "store/clickhouse/clickhouse_anomaly_row.hpp"

#include <cmath>

#include "store/stored_rows.hpp"

namespace msmon {

void write_anomaly_row(RowBinaryWriter& w, const std::string& job, const std::string& node, std::uint64_t spool,
                       std::int64_t id, const AnomalyRecord& a) {
    w.str(job);
    w.str(node);
    w.u64(spool);
    w.i64(id);
    w.str(a.source);
    w.str(a.rule);
    w.i32(a.rank);
    w.i64(a.step);
    w.i64(a.micro_step.value_or(-1));
    w.str(a.kind);
    w.str(a.vpp_stage);
    w.str(a.name);
    w.str(a.op);
    w.f64(a.value);
    w.u8(a.reference ? 1 : 0);
    w.f64(a.reference.value_or(0));
    w.str(a.message);
    w.str(a.tag_name);
    w.str(a.key);
    w.i64(a.call_id);
    w.i64(a.pp_stage);
    w.i64(a.vpp);
    w.str(group_mates_text(a.group_mates));
    w.f64(std::isfinite(a.score) ? a.score : 0.0);
}

}  // namespace msmon
