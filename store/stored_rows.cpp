#include "store/stored_rows.hpp"

#include <cstdlib>

#include "store/schema.hpp"

namespace msmon {

std::string stored_anomaly_columns(const std::string& alias) {
    std::string out;
    for (const char* c :
         {"source", "rule", "rank", "step", "micro_step", "kind", "vpp_stage", "name", "op", "value", "reference",
          "message", "tag_name", "dump_key", "call_id", "pp_stage", "vpp", "group_mates", "score"})
        out += (out.empty() ? "" : ", ") + alias + c;
    return out;
}

AnomalyRecord read_stored_anomaly(const Statement& q, int c) {
    AnomalyRecord a;
    a.source = q.text(c + 0);
    a.rule = q.text(c + 1);
    a.rank = static_cast<int>(q.int64(c + 2));
    a.step = q.int64(c + 3);
    a.micro_step = q.opt_int64(c + 4);
    a.kind = q.text(c + 5);
    a.vpp_stage = q.text(c + 6);
    a.name = q.text(c + 7);
    a.op = q.text(c + 8);
    a.value = column_value(q.raw(), c + 9);
    if (!q.is_null(c + 10)) a.reference = column_value(q.raw(), c + 10);
    a.message = q.text(c + 11);
    a.tag_name = q.text(c + 12);
    a.key = q.text(c + 13);
    a.call_id = q.int64(c + 14);
    a.pp_stage = q.int64(c + 15);
    a.vpp = q.int64(c + 16);
    a.group_mates = parse_group_mates(q.text(c + 17));
    a.score = q.real(c + 18);
    return a;
}

CheckpointRecord read_stored_checkpoint(const Statement& q) {
    CheckpointRecord c;
    c.source_path = q.text(0);
    c.position = q.int64(1);
    c.name = q.text(2);
    c.rank = static_cast<int>(q.int64(3));
    c.epoch = q.int64(4);
    c.step = q.int64(5);
    c.times = q.int64(6);
    c.healthy = q.int64(7) != 0;
    return c;
}

std::string group_mates_text(const std::vector<int>& mates) {
    std::string out;
    for (int r : mates) out += (out.empty() ? "" : ",") + std::to_string(r);
    return out;
}

std::vector<int> parse_group_mates(const std::string& text) {
    std::vector<int> out;
    for (std::size_t start = 0; start < text.size();) {
        const auto comma = text.find(',', start);
        out.push_back(std::atoi(text.substr(start, comma - start).c_str()));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

}  // namespace msmon
