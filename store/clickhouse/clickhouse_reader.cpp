// Every query filters on the job (the key's first column) and reads with FINAL, so a row re-sent after an
// ambiguous failure counts once. Aggregation and downsampling run in ClickHouse: a per-rank series is one GROUP
// BY (rank, step) with the same combination rules as rank_block, then per pixel column when the view gives its
// width (store/clickhouse/clickhouse_series.cpp); only names matched by a regex are chosen
// here (std::regex, ECMAScript, as the SQLite reader does), from the job's distinct names. What there is (kinds,
// ranks, names, step ranges) comes from the series summary, not from scanning the values.
#include "store/clickhouse/clickhouse_reader.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "core/detect/rules.hpp"
#include "core/layout/monitor_layout.hpp"
#include "core/text/name_pattern.hpp"
#include "store/clickhouse/clickhouse_node_details.hpp"
#include "store/clickhouse/clickhouse_schema.hpp"
#include "store/clickhouse/clickhouse_series.hpp"
#include "store/clickhouse/row_binary.hpp"
#include "store/module_series.hpp"
#include "store/stored_rows.hpp"

namespace msmon {

namespace {

std::string in_list(const std::vector<std::string>& values) {
    std::string s = "(";
    for (std::size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + ch_quote(values[i]);
    return s + ")";
}

class ClickHouseReader final : public Reader {
public:
    ClickHouseReader(const ClickHouseTarget& target, std::string job) : client_(target), job_(std::move(job)) {
        db_ = target.database;
        ensure_clickhouse_schema(client_);  // a store an older agent made gets its series summary here
        if (job_.empty()) {
            // The job an agent reported in most recently (node_files, a row per node), not a scan of the values.
            std::string latest =
                rows("SELECT job FROM " + db_ + ".node_files GROUP BY job ORDER BY max(shipped) DESC LIMIT 1");
            if (latest.empty())  // agents older than node_files
                latest = rows("SELECT job FROM " + db_ + ".points GROUP BY job ORDER BY max(shipped) DESC LIMIT 1");
            RowBinaryReader r(latest);
            if (r.at_end()) throw std::runtime_error(target.text() + " holds no job yet");
            job_ = r.str();
        }
        where_job_ = " WHERE job = " + ch_quote(job_);
        // Agents' findings of the rules that compare ranks give way to the judge's at the steps it judged.
        std::string rules;
        for (const RuleInfo& rule : all_rules())
            if (rule.job_level) rules += (rules.empty() ? "" : ", ") + ch_quote(rule.name);
        anomalies_where_ = where_job_ + " AND NOT (node != " + ch_quote(kJudgeNode) + " AND rule IN (" + rules +
                           ") AND step IN (SELECT step FROM " + db_ + ".judged_steps" + where_job_ + "))";
        // A judge's tie that replicas it had never seen broke when their copies came late: the departure the judge
        // found then (same step, kind and tensor, of the tie's rank or naming it among the agreeing replicas) is
        // what happened, and the tie gives way to it (core/detect/replica_series.hpp).
        anomalies_where_ += " AND NOT (node = " + ch_quote(kJudgeNode) +
                            " AND rule = " + ch_quote(rule_name(Rule::ReplicaTie)) +
                            " AND (step, kind, name, rank) IN (SELECT step, kind, name, "
                            "arrayJoin(arrayConcat([rank], arrayMap(x -> toInt32OrZero(x), arrayFilter(x -> x != '', "
                            "splitByChar(',', group_mates))))) FROM " +
                            db_ + ".anomalies" + where_job_ + " AND node = " + ch_quote(kJudgeNode) +
                            " AND rule = " + ch_quote(rule_name(Rule::ReplicaDivergence)) + "))";
    }

    void points(const PointFilter& filter, const std::function<void(const Point&)>& sink) override {
        std::string where = where_job_;
        if (filter.rank) where += " AND rank = " + std::to_string(*filter.rank);
        if (filter.kind) where += " AND kind = " + ch_quote(*filter.kind);
        if (filter.op) where += " AND op = " + ch_quote(*filter.op);
        if (filter.steps)
            where += " AND step BETWEEN " + std::to_string(filter.steps->min()) + " AND " +
                     std::to_string(filter.steps->max());
        if (filter.name_regex) {
            const auto names = matching_names(*filter.name_regex, filter.kind);
            if (names.empty()) return;
            where += " AND name IN " + in_list(names);
        }
        RowBinaryReader r(
            rows("SELECT rank, run, kind, vpp_stage, name, micro_step, step, op, is_text, value, text FROM " + db_ +
                 ".points FINAL" + where + " ORDER BY rank, run, kind, tensor_ord, step, op_ord"));
        std::map<std::string, std::int64_t> run_ids;
        Point p;
        std::string run, kind, vpp, name, op, text;
        while (!r.at_end()) {
            p.rank = r.i32();
            run = r.str();
            kind = r.str();
            vpp = r.str();
            name = r.str();
            const std::int64_t micro = r.i64();
            p.step = r.i64();
            op = r.str();
            p.is_text = r.u8() != 0;
            p.value = r.f64();
            text = r.str();
            if (filter.steps && !filter.steps->contains(p.step)) continue;
            p.run_id = run_ids.try_emplace(run, static_cast<std::int64_t>(run_ids.size() + 1)).first->second;
            p.kind = kind;
            p.vpp_stage = vpp;
            p.name = name;
            p.micro_step = micro < 0 ? std::nullopt : std::optional<std::int64_t>(micro);
            p.op = op;
            p.text = text;
            sink(p);
        }
    }

    StoreSummary summary() override {
        RowBinaryReader r(
            rows("SELECT uniqExact(rank, run), uniqExact(rank), uniqExact(rank, run, kind, vpp_stage, "
                 "name, micro_step), uniqExact(rank, run, kind, vpp_stage, name, micro_step, op) FROM " +
                 db_ + ".points" + where_job_));
        StoreSummary s;
        s.runs = static_cast<std::int64_t>(r.u64());
        s.ranks = static_cast<std::int64_t>(r.u64());
        s.tensors = static_cast<std::int64_t>(r.u64());
        s.series = static_cast<std::int64_t>(r.u64());
        read_node_detail_counts(client_, job_, s);
        return s;  // repeats stay on each node (not shipped)
    }

    std::vector<IssueRecord> issues(std::size_t limit) override { return read_node_issues(client_, job_, limit); }

    std::vector<AnomalyRecord> anomalies(const AnomalyFilter& filter) override {
        std::string where = anomalies_where_;
        if (filter.source) where += " AND source = " + ch_quote(*filter.source);
        if (filter.rank) where += " AND rank = " + std::to_string(*filter.rank);
        if (filter.steps)
            where += " AND step BETWEEN " + std::to_string(filter.steps->min()) + " AND " +
                     std::to_string(filter.steps->max());
        RowBinaryReader r(rows(std::string("SELECT ") + kAnomalySelect + " FROM " + db_ + ".anomalies FINAL" + where +
                               " ORDER BY node, id"));
        std::vector<AnomalyRecord> out;
        while (!r.at_end()) {
            AnomalyRecord a = read_anomaly(r);
            if (filter.steps && !filter.steps->contains(a.step)) continue;
            out.push_back(std::move(a));
        }
        return out;
    }

    AnomalyGroupPage anomaly_groups(const AnomalyGroupRequest& req) override {
        AnomalyGroupPage page;
        {
            RowBinaryReader r(rows("SELECT count() FROM " + db_ + ".anomalies FINAL" + anomalies_where_));
            page.total_anomalies = static_cast<std::int64_t>(r.u64());
        }
        std::string where = anomalies_where_;
        if (req.source) where += " AND source = " + ch_quote(*req.source);
        if (req.rule) where += " AND rule = " + ch_quote(*req.rule);
        if (req.kind) where += " AND kind = " + ch_quote(*req.kind);
        if (req.rank) where += " AND rank = " + std::to_string(*req.rank);
        if (req.name_regex) {
            std::vector<std::string> names;
            const NamePattern re = NamePattern::compile_or_throw(*req.name_regex);
            RowBinaryReader r(rows("SELECT DISTINCT name FROM " + db_ + ".anomalies" + where));
            while (!r.at_end())
                if (std::string n = r.str(); re.search(n)) names.push_back(std::move(n));
            if (names.empty()) return page;
            where += " AND name IN " + in_list(names);
        }
        const std::string groups =
            "SELECT argMax(tuple(node, id), score) AS face, count() AS n, min(step) AS g_first, "
            "max(step) AS g_last, max(score) AS best, any(rank) AS g_rank FROM " +
            db_ + ".anomalies FINAL" + where + " GROUP BY source, rule, rank, kind, name, op";
        {
            RowBinaryReader r(rows("SELECT count() FROM (" + groups + ")"));
            page.total_groups = static_cast<std::int64_t>(r.u64());
        }
        RowBinaryReader r(rows("SELECT face.1, face.2, n, g_first, g_last, best FROM (" + groups +
                               ") ORDER BY best DESC, g_first, g_rank LIMIT " + std::to_string(req.limit) + " OFFSET " +
                               std::to_string(req.offset)));
        std::vector<std::pair<std::string, std::int64_t>> faces;
        std::vector<AnomalyGroup> groups_out;
        while (!r.at_end()) {
            std::string node = r.str();
            const std::int64_t id = r.i64();
            AnomalyGroup g;
            g.count = static_cast<int>(r.u64());
            g.first_step = r.i64();
            g.last_step = r.i64();
            g.rank_score = r.f64();
            faces.emplace_back(std::move(node), id);
            groups_out.push_back(std::move(g));
        }
        if (faces.empty()) return page;
        std::string keys;
        for (const auto& [node, id] : faces)
            keys += (keys.empty() ? "(" : ", (") + ch_quote(node) + ", " + std::to_string(id) + ")";
        RowBinaryReader fr(rows(std::string("SELECT node, id, ") + kAnomalySelect + " FROM " + db_ +
                                ".anomalies FINAL" + anomalies_where_ + " AND (node, id) IN (" + keys + ")"));
        std::map<std::pair<std::string, std::int64_t>, AnomalyRecord> by_key;
        while (!fr.at_end()) {
            std::string node = fr.str();
            const std::int64_t id = fr.i64();
            by_key[{std::move(node), id}] = read_anomaly(fr);
        }
        for (std::size_t i = 0; i < faces.size(); ++i) {
            auto it = by_key.find(faces[i]);
            if (it == by_key.end()) continue;
            groups_out[i].face = it->second;
            page.groups.push_back(std::move(groups_out[i]));
        }
        return page;
    }

    AnomalyMarks anomaly_marks(double min_score, std::int64_t from_step) override {
        AnomalyMarks m;
        {
            RowBinaryReader r(rows("SELECT count() FROM " + db_ + ".anomalies FINAL" + anomalies_where_));
            m.total = static_cast<std::int64_t>(r.u64());
        }
        char score[40];
        std::snprintf(score, sizeof score, "%.17g", min_score);
        RowBinaryReader r(rows("SELECT rank, step FROM " + db_ + ".anomalies FINAL" + anomalies_where_ +
                               " AND step >= " + std::to_string(from_step) +
                               " GROUP BY rank, step HAVING max(score) >= " + score));
        while (!r.at_end()) {
            const int rank = r.i32();
            m.marks.emplace_back(rank, r.i64());
        }
        return m;
    }

    std::vector<EventRecord> events() override {
        RowBinaryReader r(rows("SELECT run, rank, has_step, step, kind, time, message FROM " + db_ + ".events FINAL" +
                               where_job_ + " ORDER BY has_step DESC, step, rank, node, id"));
        std::vector<EventRecord> out;
        while (!r.at_end()) {
            EventRecord e;
            e.run_id = r.i64();
            e.rank = r.i32();
            const bool has_step = r.u8() != 0;
            const std::int64_t step = r.i64();
            if (has_step) e.step = step;
            e.kind = r.str();
            e.time = r.str();
            e.message = r.str();
            out.push_back(std::move(e));
        }
        return out;
    }

    std::vector<RunConfigEntry> run_config(std::optional<int> rank) override {
        const std::string rank_filter = rank ? " AND rank = " + std::to_string(*rank) : std::string();
        RowBinaryReader r(rows("SELECT run, rank, node, has_step, step, message FROM " + db_ + ".events FINAL" +
                               where_job_ + " AND kind = 'config'" + rank_filter + " ORDER BY rank, node, run, id"));
        std::vector<RunConfigEntry> out;
        while (!r.at_end()) {
            RunConfigEntry c;
            c.run_id = r.i64();
            c.rank = r.i32();
            c.source = "node " + r.str();  // runs are numbered per node: the node tells them apart
            const bool has_step = r.u8() != 0;
            const std::int64_t step = r.i64();
            if (has_step) c.step = step;
            split_config_message(r.str(), c);
            out.push_back(std::move(c));
        }
        return out;
    }

    std::vector<CheckpointRecord> checkpoints() override {
        // Each node's latest generation: its checkpoint table as last shipped.
        RowBinaryReader r(rows("SELECT source_path, position, name, rank, epoch, step, times, healthy FROM " + db_ +
                               ".checkpoints FINAL" + where_job_ +
                               " AND (node, generation) IN (SELECT node, "
                               "max(generation) FROM " +
                               db_ + ".checkpoints" + where_job_ +
                               " GROUP BY node) ORDER BY node, source_path, position"));
        std::vector<CheckpointRecord> out;
        while (!r.at_end()) {
            CheckpointRecord c;
            c.source_path = r.str();
            c.position = r.i64();
            c.name = r.str();
            c.rank = r.i32();
            c.epoch = r.i64();
            c.step = r.i64();
            c.times = r.i64();
            c.healthy = r.u8() != 0;
            out.push_back(std::move(c));
        }
        return out;
    }

    StoreCatalog catalog() override {
        StoreCatalog c;
        {
            RowBinaryReader r(rows("SELECT kind, op FROM " + db_ + ".series" + where_job_ +
                                   " AND is_text = 0 GROUP BY kind, op ORDER BY kind, minMerge(op_ord), op"));
            while (!r.at_end()) {
                std::string kind = r.str();
                std::string op = r.str();
                if (c.kinds.empty() || c.kinds.back().first != kind) c.kinds.push_back({kind, {}});
                c.kinds.back().second.push_back(std::move(op));
            }
        }
        {
            RowBinaryReader r(rows("SELECT DISTINCT rank FROM " + db_ + ".series" + where_job_ + " ORDER BY rank"));
            while (!r.at_end()) c.ranks.push_back(r.i32());
        }
        RowBinaryReader r(
            rows("SELECT minMerge(min_step), maxMerge(max_step), count() FROM " + db_ + ".series" + where_job_));
        const std::int64_t lo = r.i64(), hi = r.i64();
        if (r.u64() > 0) {
            c.min_step = lo;
            c.max_step = hi;
        }
        return c;
    }

    // The whole-job store keeps no runs (the agents ship values by rank and step; a restart's later value
    // replaces the earlier as it arrives).
    std::vector<RunSegment> run_segments() override { return {}; }
    std::vector<StepWallTime> step_times() override { return {}; }  // not shipped (yet)

    std::vector<std::pair<int, std::int64_t>> rank_last_steps() override {
        RowBinaryReader r(rows("SELECT rank, maxMerge(max_step) FROM " + db_ + ".series" + where_job_ +
                               " GROUP BY rank ORDER BY rank"));
        std::vector<std::pair<int, std::int64_t>> out;
        while (!r.at_end()) {
            const int rank = r.i32();
            out.emplace_back(rank, r.i64());
        }
        return out;
    }

    ModuleInfo module_info(int rank, const std::string& tensor_name) override {
        return read_module_info(client_, job_, rank, tensor_name);
    }

    std::vector<RankSeries> rank_series(const RankSeriesRequest& req) override {
        std::string where = where_job_ + " AND kind = " + ch_quote(req.kind) + " AND op = " + ch_quote(req.op);
        if (req.name_regex) {
            const auto names = matching_names(*req.name_regex, req.kind);
            if (names.empty()) return {};
            where += " AND name IN " + in_list(names);
        }
        const auto rows_of = [this](const std::string& sql) { return rows(sql); };
        if (!req.name_regex)  // every parameter: the agents' per-rank step aggregates, one row per rank and step
            return clickhouse_rank_series(rows_of, req, db_ + ".rank_steps FINAL" + where, db_ + ".series" + where,
                                          true);
        return clickhouse_rank_series(rows_of, req, db_ + ".points FINAL" + where, db_ + ".series" + where, false);
    }

    // A rank's tensors of a kind in forward order: by the run that first wrote them, then the order its files listed
    // them (tensor_ord).
    std::vector<ModuleRow> module_rows(const std::string& kind, int rank) override {
        const std::string where =
            where_job_ + " AND rank = " + std::to_string(rank) + " AND kind = " + ch_quote(kind) + " AND is_text = 0";
        RowBinaryReader r(rows("SELECT vpp_stage, name, micro_step FROM " + db_ + ".points" + where +
                               " GROUP BY vpp_stage, name, micro_step ORDER BY min(run), "
                               "argMin(tensor_ord, run), name, micro_step"));
        std::vector<ModuleRow> out;
        while (!r.at_end()) {
            ModuleRow row;
            row.vpp_stage = r.str();
            row.name = r.str();
            const std::int64_t micro = r.i64();
            if (micro >= 0) row.micro_step = micro;
            out.push_back(std::move(row));
        }
        return out;
    }

    // The rows asked for, the window's steps only, in one query; a restart's later run wins a step both wrote.
    std::vector<std::vector<StepValue>> module_series(const ModuleSeriesRequest& req) override {
        std::vector<std::vector<StepValue>> out(req.rows.size());
        if (req.rows.empty()) return out;
        std::map<std::tuple<std::string, std::string, std::int64_t>, std::size_t> index;
        std::vector<std::string> names;
        for (std::size_t i = 0; i < req.rows.size(); ++i) {
            const auto& row = req.rows[i];
            index.emplace(std::make_tuple(row.vpp_stage, row.name, row.micro_step.value_or(-1)), i);
            names.push_back(row.name);
        }
        std::string where = where_job_ + " AND rank = " + std::to_string(req.rank) +
                            " AND kind = " + ch_quote(req.kind) + " AND op = " + ch_quote(req.op) +
                            " AND is_text = 0 AND name IN " + in_list(names);
        if (req.window.lo) where += " AND step >= " + std::to_string(*req.window.lo);
        if (req.window.hi) where += " AND step <= " + std::to_string(*req.window.hi);
        RowBinaryReader r(rows("SELECT vpp_stage, name, micro_step, run, step, value FROM " + db_ + ".points FINAL" +
                               where + " ORDER BY vpp_stage, name, micro_step, run, step"));
        std::vector<std::vector<StepValue>> run_points(req.rows.size());
        std::optional<std::size_t> current;
        std::string run, last_run;
        const auto flush = [&] {
            if (current) merge_later_run(out[*current], run_points[*current]), run_points[*current].clear();
        };
        while (!r.at_end()) {
            std::string vpp = r.str(), name = r.str();
            const std::int64_t micro = r.i64();
            run = r.str();
            const std::int64_t step = r.i64();
            const double value = r.f64();
            const auto it = index.find(std::make_tuple(vpp, name, micro));
            if (it == index.end()) continue;
            if (!current || *current != it->second || run != last_run) flush();
            current = it->second;
            last_run = run;
            run_points[it->second].push_back({step, value});
        }
        flush();
        reduce_module_series(out, req.window);
        return out;
    }

    std::optional<JobPlacement> job_placement() override {
        JobPlacement out;
        {
            RowBinaryReader r(rows("SELECT rank, argMax(node, version) FROM " + db_ + ".rank_steps" + where_job_ +
                                   " GROUP BY rank ORDER BY rank"));
            while (!r.at_end()) {
                const int rank = r.i32();
                out.rank_nodes.emplace_back(rank, r.str());
            }
        }
        RowBinaryReader r(
            rows("SELECT count(), max(step), argMax(judge, version), toString(max(judged)) FROM (SELECT "
                 "step, judge, version, judged FROM " +
                 db_ + ".judged_steps FINAL" + where_job_ + ")"));
        out.judged_steps = static_cast<std::int64_t>(r.u64());
        out.judged_through = r.i64();
        out.last_judge = r.str();
        out.last_judged = r.str();
        return out;
    }

    std::vector<std::int64_t> collected_steps(std::size_t limit) override {
        std::vector<std::string> kinds;
        for (const auto& [kind, ops] : catalog().kinds)
            if (is_known_v1_prefix(kind)) kinds.push_back(kind);
        if (kinds.empty()) return {};
        RowBinaryReader r(rows("SELECT DISTINCT step FROM " + db_ + ".rank_steps" + where_job_ + " AND kind IN " +
                               in_list(kinds) + " ORDER BY step DESC LIMIT " + std::to_string(limit)));
        std::vector<std::int64_t> out;
        while (!r.at_end()) out.push_back(r.i64());
        return out;
    }

private:
    static constexpr const char* kAnomalySelect =
        "source, rule, rank, step, micro_step, kind, vpp_stage, name, op, value, has_reference, reference, "
        "message, "
        "tag_name, dump_key, call_id, pp_stage, vpp, group_mates, score";

    static AnomalyRecord read_anomaly(RowBinaryReader& r) {
        AnomalyRecord a;
        a.source = r.str();
        a.rule = r.str();
        a.rank = r.i32();
        a.step = r.i64();
        const std::int64_t micro = r.i64();
        if (micro >= 0) a.micro_step = micro;
        a.kind = r.str();
        a.vpp_stage = r.str();
        a.name = r.str();
        a.op = r.str();
        a.value = r.f64();
        const bool has_reference = r.u8() != 0;
        const double reference = r.f64();
        if (has_reference) a.reference = reference;
        a.message = r.str();
        a.tag_name = r.str();
        a.key = r.str();
        a.call_id = r.i64();
        a.pp_stage = r.i64();
        a.vpp = r.i64();
        a.group_mates = parse_group_mates(r.str());
        a.score = r.f64();
        return a;
    }

    std::vector<std::string> matching_names(const std::string& regex, const std::optional<std::string>& kind) {
        const NamePattern re = NamePattern::compile_or_throw(regex);
        RowBinaryReader r(rows("SELECT DISTINCT name FROM " + db_ + ".series" + where_job_ +
                               (kind ? " AND kind = " + ch_quote(*kind) : std::string())));
        std::vector<std::string> out;
        while (!r.at_end())
            if (std::string n = r.str(); re.search(n)) out.push_back(std::move(n));
        return out;
    }

    std::string rows(const std::string& sql) { return client_.query(sql + " FORMAT RowBinary"); }

    ClickHouseClient client_;
    std::string job_, db_, where_job_;
    std::string anomalies_where_;  // where_job_, and not what the judge superseded
};

}  // namespace

std::unique_ptr<Reader> open_clickhouse_reader(const ClickHouseTarget& target, const std::string& job) {
    return std::make_unique<ClickHouseReader>(target, job);
}

}  // namespace msmon
