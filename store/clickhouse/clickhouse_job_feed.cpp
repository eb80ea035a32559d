// The judge's queries. A step's rows are one GROUP BY per tensor and step with every rank's values in arrays
// (ClickHouse gathers the ranks side by side; the judge only unpacks them), read from judge_rows (step first, so a
// step is a narrow range of the key) with FINAL so that a row sent twice counts once.
#include "store/clickhouse/clickhouse_job_feed.hpp"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <map>
#include <numeric>
#include <tuple>

#include "core/text/rank_ranges.hpp"
#include "store/clickhouse/clickhouse_anomaly_row.hpp"
#include "store/clickhouse/clickhouse_schema.hpp"
#include "store/clickhouse/row_binary.hpp"

namespace msmon {

namespace {

// FNV-1a over the fields of the anomalies table's key that the judge varies.
std::uint64_t fnv(std::uint64_t h, std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return (h ^ 0xff) * 1099511628211ull;  // a separator: ("ab","c") and ("a","bc") differ
}

}  // namespace

std::int64_t judge_anomaly_id(const AnomalyRecord& a) {
    std::uint64_t h = 1469598103934665603ull;
    for (const std::string_view part : {std::string_view(a.source), std::string_view(a.rule),
                                        std::string_view(a.tag_name), std::string_view(a.op), std::string_view(a.key)})
        h = fnv(h, part);
    h = fnv(h, std::to_string(a.rank) + "@" + std::to_string(a.step));
    return kJudgeIdBase + static_cast<std::int64_t>(h & ((std::uint64_t{1} << 62) - 1));
}

ClickHouseJobFeed::ClickHouseJobFeed(ClickHouseTarget target, std::string job)
    : client_(std::move(target)), job_(std::move(job)), db_(client_.target().database) {
    ensure_clickhouse_schema(client_);
}

std::vector<StepRankCount> ClickHouseJobFeed::step_ranks(std::int64_t from_step) const {
    RowBinaryReader r(rows_of("SELECT step, rank, sum(n) FROM " + db_ + ".step_ranks WHERE job = " + ch_quote(job_) +
                              " AND step >= " + std::to_string(from_step) +
                              " GROUP BY step, rank ORDER BY step, rank"));
    std::vector<StepRankCount> out;
    while (!r.at_end()) {
        StepRankCount c;
        c.step = r.i64();
        c.rank = r.i32();
        c.values = r.u64();
        out.push_back(c);
    }
    return out;
}

std::vector<JobRow> ClickHouseJobFeed::rows(const std::vector<std::string>& kinds, std::int64_t first,
                                            std::int64_t last) const {
    std::string in;
    for (const auto& k : kinds) in += (in.empty() ? "" : ", ") + ch_quote(k);
    const std::string where = " WHERE job = " + ch_quote(job_) + " AND step BETWEEN " + std::to_string(first) +
                              " AND " + std::to_string(last) + " AND kind IN (" + in + ")";
    // Run folders and op names go as a hash and a position per value, and are named from caches: each is one of
    // a few texts, and sending them whole with every value made the answer ~4x larger and slower.
    const auto learn_names = [&] {
        RowBinaryReader names(rows_of("SELECT DISTINCT cityHash64(run), run FROM " + db_ + ".judge_rows" + where));
        while (!names.at_end()) {
            const std::uint64_t hash = names.u64();
            run_names_[hash] = names.str();
        }
        RowBinaryReader ops(rows_of("SELECT kind, op_ord, groupUniqArray(op) FROM " + db_ + ".judge_rows" + where +
                                    " GROUP BY kind, op_ord"));
        while (!ops.at_end()) {
            std::string kind = ops.str();
            const std::uint8_t ord = ops.u8();
            std::vector<std::string> names_at(ops.length());
            for (auto& n : names_at) n = ops.str();
            // Two layouts of one kind with different ops at one place: ops are sent whole from now on.
            if (names_at.size() != 1) ops_by_name_ = true;
            else op_names_[{std::move(kind), ord}] = names_at[0];
        }
    };
    struct Group {
        JobRow proto;
        std::vector<int> ranks;
        std::vector<std::uint64_t> runs;
        std::vector<std::uint8_t> op_ords;
        std::vector<std::string> ops;  // ops_by_name_ only
        std::vector<double> values;
    };
    const auto read_groups = [&] {
        RowBinaryReader r(
            rows_of("SELECT kind, vpp_stage, name, micro_step, step, any(tensor_ord), groupArray(rank), "
                    "groupArray(cityHash64(run)), groupArray(op_ord), " +
                    std::string(ops_by_name_ ? "groupArray(op)" : "[]") + ", groupArray(value) FROM " + db_ +
                    ".judge_rows FINAL" + where + " GROUP BY kind, vpp_stage, name, micro_step, step"));
        std::vector<Group> groups;
        while (!r.at_end()) {
            Group g;
            g.proto.kind = r.str();
            g.proto.vpp_stage = r.str();
            g.proto.name = r.str();
            g.proto.micro_step = r.i64();
            g.proto.step = r.i64();
            g.proto.order = r.u64();
            g.ranks.resize(r.length());
            for (auto& v : g.ranks) v = r.i32();
            g.runs.resize(r.length());
            for (auto& v : g.runs) v = r.u64();
            g.op_ords.resize(r.length());
            for (auto& v : g.op_ords) v = r.u8();
            g.ops.resize(r.length());
            for (auto& v : g.ops) v = r.str();
            g.values.resize(r.length());
            for (auto& v : g.values) v = r.f64();
            const std::size_t n = g.ranks.size();
            if (g.runs.size() != n || g.op_ords.size() != n || g.values.size() != n ||
                (ops_by_name_ && g.ops.size() != n))
                throw std::runtime_error("ClickHouse: arrays of one group differ in length");
            groups.push_back(std::move(g));
        }
        return groups;
    };
    auto groups = read_groups();
    bool known = !ops_by_name_;
    for (const auto& g : groups) {
        for (std::size_t i = 0; known && i < g.runs.size(); ++i)
            known = run_names_.count(g.runs[i]) && (ops_by_name_ || op_names_.count({g.proto.kind, g.op_ords[i]}));
        if (!known) break;
    }
    if (!known) {
        const bool had_names = !ops_by_name_;
        learn_names();
        if (had_names && ops_by_name_) groups = read_groups();  // ops must come whole after all
    }
    std::vector<JobRow> out;
    std::vector<std::size_t> at;
    for (auto& g : groups) {
        // One row per (rank, run), its ops in the order the rank's CSV printed them.
        const std::size_t n = g.ranks.size();
        at.resize(n);
        std::iota(at.begin(), at.end(), 0);
        std::sort(at.begin(), at.end(), [&](std::size_t a, std::size_t b) {
            return std::tie(g.ranks[a], g.runs[a], g.op_ords[a]) < std::tie(g.ranks[b], g.runs[b], g.op_ords[b]);
        });
        for (std::size_t i = 0; i < n;) {
            JobRow row = g.proto;
            row.rank = g.ranks[at[i]];
            const std::uint64_t run = g.runs[at[i]];
            const auto name = run_names_.find(run);
            if (name == run_names_.end()) throw std::runtime_error("ClickHouse: a run folder not named");
            row.run = name->second;
            for (; i < n && g.ranks[at[i]] == row.rank && g.runs[at[i]] == run; ++i) {
                if (ops_by_name_) {
                    row.ops.push_back(g.ops[at[i]]);
                } else {
                    const auto op = op_names_.find({g.proto.kind, g.op_ords[at[i]]});
                    if (op == op_names_.end()) throw std::runtime_error("ClickHouse: an op not named");
                    row.ops.push_back(op->second);
                }
                row.values.push_back(g.values[at[i]]);
            }
            out.push_back(std::move(row));
        }
    }
    return out;
}

void ClickHouseJobFeed::write_anomalies(const std::vector<AnomalyRecord>& anomalies) const {
    if (anomalies.empty()) return;
    RowBinaryWriter w;
    for (const auto& a : anomalies) write_anomaly_row(w, job_, kJudgeNode, 0, judge_anomaly_id(a), a);
    client_.insert(db_ + ".anomalies (" + kAnomalyColumns + ")", w.data());
}

void ClickHouseJobFeed::write_judged(std::int64_t step, const std::vector<int>& ranks, const std::string& judge) const {
    const auto version = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
    RowBinaryWriter w;
    w.str(job_);
    w.i64(step);
    w.u32(static_cast<std::uint32_t>(ranks.size()));
    w.str(rank_ranges(ranks));
    w.str(judge);
    w.u64(version);
    client_.insert(db_ + ".judged_steps (" + kJudgedStepColumns + ")", w.data());
}

std::map<std::int64_t, std::vector<int>> ClickHouseJobFeed::judged_ranks(std::int64_t from_step) const {
    RowBinaryReader r(rows_of("SELECT step, rank_list FROM " + db_ + ".judged_steps WHERE job = " + ch_quote(job_) +
                              " AND step >= " + std::to_string(from_step)));
    std::map<std::int64_t, std::vector<int>> out;
    while (!r.at_end()) {
        const std::int64_t step = r.i64();
        const auto ranks = parse_rank_ranges(r.str());
        if (!ranks) continue;
        auto& all = out[step];
        std::vector<int> merged;
        std::set_union(all.begin(), all.end(), ranks->begin(), ranks->end(), std::back_inserter(merged));
        all = std::move(merged);
    }
    return out;
}

std::optional<std::int64_t> ClickHouseJobFeed::judged_through() const {
    RowBinaryReader r(rows_of("SELECT count(), max(step) FROM " + db_ + ".judged_steps WHERE job = " + ch_quote(job_)));
    const std::uint64_t n = r.u64();
    const std::int64_t step = r.i64();
    if (n == 0) return std::nullopt;
    return step;
}

}  // namespace msmon
