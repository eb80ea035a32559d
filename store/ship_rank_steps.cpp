// Keys arrive sorted by (kind, op, rank, step): one rank_block row serves the consecutive keys of its block.
#include "store/ship_rank_steps.hpp"

#include <algorithm>

#include "store/schema.hpp"

namespace msmon {

RankStepReader::RankStepReader(const std::string& store_path) : conn_(store_path, Connection::Mode::read_only) {
    configure_connection(conn_, false);
}

std::vector<RankStepRow> RankStepReader::read(const std::set<RankStepKey>& keys) {
    std::vector<RankStepRow> out;
    if (keys.empty()) return out;
    conn_.exec("BEGIN");
    struct Guard {
        Connection& c;
        ~Guard() { sqlite3_exec(c.raw(), "COMMIT", nullptr, nullptr, nullptr); }
    } guard{conn_};
    Statement q(conn_, "SELECT data FROM rank_block WHERE kind = ? AND op = ? AND block = ? AND rank = ?");
    std::vector<StepAggregate> entries;
    const RankStepKey* block_key = nullptr;
    for (const RankStepKey& key : keys) {
        if (!block_key || block_key->kind != key.kind || block_key->op != key.op || block_key->rank != key.rank ||
            block_of(block_key->step) != block_of(key.step)) {
            block_key = &key;
            entries.clear();
            q.reset();
            q.bind(1, std::string_view(key.kind));
            q.bind(2, std::string_view(key.op));
            q.bind(3, block_of(key.step));
            q.bind(4, static_cast<std::int64_t>(key.rank));
            if (q.step())
                entries = decode_block(sqlite3_column_blob(q.raw(), 0),
                                       static_cast<std::size_t>(sqlite3_column_bytes(q.raw(), 0)));
        }
        const auto it = std::lower_bound(entries.begin(), entries.end(), key.step,
                                         [](const StepAggregate& a, std::int64_t s) { return a.step < s; });
        if (it != entries.end() && it->step == key.step) out.push_back({key, *it});
    }
    return out;
}

}  // namespace msmon
