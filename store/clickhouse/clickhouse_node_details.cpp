// Each query reads with FINAL (a row re-sent after an ambiguous failure counts once) and filters on the job.
#include "store/clickhouse/clickhouse_node_details.hpp"

#include <map>
#include <utility>

#include "store/clickhouse/row_binary.hpp"

namespace msmon {

namespace {

RowBinaryReader rows(const ClickHouseClient& client, const std::string& sql) {
    return RowBinaryReader(client.query(sql + " FORMAT RowBinary"));
}

std::string where_job(const std::string& job) {
    return " WHERE job = " + ch_quote(job);
}

}  // namespace

void read_node_detail_counts(const ClickHouseClient& client, const std::string& job, StoreSummary& into) {
    const std::string& db = client.target().database;
    {
        auto r = rows(client, "SELECT sum(files) FROM " + db + ".node_files FINAL" + where_job(job));
        into.files = static_cast<std::int64_t>(r.u64());
    }
    auto r = rows(client, "SELECT count() FROM " + db + ".issues FINAL" + where_job(job));
    into.issues = static_cast<std::int64_t>(r.u64());
}

std::vector<IssueRecord> read_node_issues(const ClickHouseClient& client, const std::string& job, std::size_t limit) {
    auto r = rows(client, "SELECT path, line, reason, excerpt FROM " + client.target().database + ".issues FINAL" +
                              where_job(job) + " ORDER BY shipped DESC, id DESC, node LIMIT " + std::to_string(limit));
    std::vector<IssueRecord> out;
    while (!r.at_end()) {
        IssueRecord i;
        i.path = r.str();
        i.line = r.i64();
        i.reason = r.str();
        i.excerpt = r.str();
        out.push_back(std::move(i));
    }
    return out;
}

Reader::ModuleInfo read_module_info(const ClickHouseClient& client, const std::string& job, int rank,
                                    const std::string& tensor_name) {
    const auto candidates = module_candidates(tensor_name);
    if (candidates.empty()) return {};
    std::string names;
    for (const auto& c : candidates) names += (names.empty() ? "" : ", ") + ch_quote(c);
    const std::string& db = client.target().database;
    // Every candidate at once, from each node's latest generation; the loop below picks as SQLite's does.
    auto r = rows(client, "SELECT module, structure, stack FROM " + db + ".modules FINAL" + where_job(job) +
                              " AND rank = " + std::to_string(rank) + " AND module IN (" + names +
                              ") AND (node, generation) IN (SELECT node, max(generation) FROM " + db + ".modules" +
                              where_job(job) + " GROUP BY node) ORDER BY node");
    std::map<std::string, std::pair<std::string, std::string>> known;  // module → (structure, stack)
    while (!r.at_end()) {
        std::string module = r.str();
        std::string structure = r.str();
        std::string stack = r.str();
        known.try_emplace(std::move(module), std::move(structure), std::move(stack));  // the first node's
    }
    for (const auto& c : candidates) {
        const auto it = known.find(c);
        if (it == known.end() || (it->second.first.empty() && it->second.second.empty())) continue;
        return {c, it->second.first, it->second.second};
    }
    return {};
}

}  // namespace msmon
