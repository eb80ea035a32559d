// Reader over SQLite: tensors are selected first (small), then each tensor's rows by one range scan.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "core/layout/monitor_layout.hpp"
#include "core/text/name_pattern.hpp"
#include "store/module_series.hpp"
#include "store/rank_step_blocks.hpp"
#include "store/reader.hpp"
#include "store/run_segment_rows.hpp"
#include "store/sample_chunks.hpp"
#include "store/schema.hpp"
#include "store/sqlite_handle.hpp"
#include "store/stored_rows.hpp"

namespace msmon {

namespace {

struct Layout {
    std::vector<std::string> ops;
    std::vector<int> slot;  // value column for numeric ops; -1 shape, -2 dtype
};

Layout parse_layout(const std::string& ops) {
    Layout l;
    int numeric = 0;
    std::size_t start = 0;
    while (start <= ops.size()) {
        auto comma = ops.find(',', start);
        std::string op = ops.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        l.slot.push_back(op == "shape" ? -1 : op == "dtype" ? -2 : numeric++);
        l.ops.push_back(std::move(op));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return l;
}

// One read transaction around a Reader call: its statements share one snapshot, and the WAL read lock is taken once
// instead of once per statement (a per-tensor loop otherwise pays two fcntl locks per seek). Nested: no-op.
class ReadTransaction {
public:
    explicit ReadTransaction(Connection& conn) : conn_(conn), owns_(sqlite3_get_autocommit(conn.raw()) != 0) {
        if (owns_) conn_.exec("BEGIN");
    }
    ~ReadTransaction() {
        if (owns_) sqlite3_exec(conn_.raw(), "COMMIT", nullptr, nullptr, nullptr);
    }
    ReadTransaction(const ReadTransaction&) = delete;
    ReadTransaction& operator=(const ReadTransaction&) = delete;

private:
    Connection& conn_;
    bool owns_;
};

// The tensors of a kind on a rank (?1 rank, ?2 kind): id, vpp_stage, name, micro_step, oldest run first, each
// run's in the order the files first listed them.
constexpr const char* kModuleTensors =
    "SELECT t.id, t.vpp_stage, t.name, t.micro_step FROM tensor t JOIN run r ON r.id = t.run_id "
    "WHERE r.rank = ?1 AND t.kind = ?2 ORDER BY run_order(r.time_label), r.id, t.id";

class SqliteReader final : public Reader {
public:
    explicit SqliteReader(const std::string& path) : conn_(path, Connection::Mode::read_only) {
        configure_connection(conn_, false);
        version_ = check_readable_version(conn_);
    }

    void points(const PointFilter& filter, const std::function<void(const Point&)>& sink) override {
        ReadTransaction snapshot(conn_);
        load_dictionaries();
        std::optional<NamePattern> name_re;
        if (filter.name_regex) name_re = NamePattern::compile_or_throw(*filter.name_regex);
        Statement tensors(conn_,
                          "SELECT t.id, r.rank, t.run_id, t.kind, t.vpp_stage, t.name, t.micro_step FROM tensor t "
                          "JOIN run r ON r.id = t.run_id WHERE (?1 IS NULL OR r.rank = ?1) AND (?2 IS NULL OR "
                          "t.kind = ?2) ORDER BY r.rank, run_order(r.time_label), r.id, t.kind, t.id");
        if (filter.rank) tensors.bind(1, *filter.rank);
        if (filter.kind) tensors.bind(2, std::string_view(*filter.kind));
        SampleChunkReader chunks(conn_);
        std::vector<SampleRow> rows;
        const std::int64_t lo = filter.steps ? filter.steps->min() : std::numeric_limits<std::int64_t>::min();
        const std::int64_t hi = filter.steps ? filter.steps->max() : std::numeric_limits<std::int64_t>::max();
        Point p;
        while (tensors.step()) {
            const std::string name = tensors.text(5);
            if (name_re && !name_re->search(name)) continue;
            const std::string kind = tensors.text(3);
            const std::string vpp = tensors.text(4);
            p.rank = static_cast<int>(tensors.int64(1));
            p.run_id = tensors.int64(2);
            p.kind = kind;
            p.vpp_stage = vpp;
            p.name = name;
            p.micro_step = tensors.opt_int64(6);
            chunks.read(tensors.int64(0), lo, hi, rows);
            for (const SampleRow& row : rows) {
                p.step = row.step;
                if (filter.steps && !filter.steps->contains(p.step)) continue;
                const Layout& layout = layouts_.at(row.layout_id);
                for (std::size_t k = 0; k < layout.ops.size(); ++k) {
                    if (filter.op && *filter.op != layout.ops[k]) continue;
                    p.op = layout.ops[k];
                    const int slot = layout.slot[k];
                    if (slot < 0) {
                        const std::int32_t id = slot == -1 ? row.shape_id : row.dtype_id;
                        p.is_text = true;
                        p.text = id ? text_of(id) : std::string_view();
                    } else {
                        p.is_text = false;
                        p.value = row.values[slot];
                    }
                    sink(p);
                }
            }
        }
    }

    StoreSummary summary() override {
        ReadTransaction snapshot(conn_);
        load_dictionaries();
        StoreSummary s;
        auto scalar = [&](const char* sql) {
            Statement q(conn_, sql);
            q.step();
            return q.int64(0);
        };
        s.runs = scalar("SELECT count(*) FROM run");
        s.ranks = scalar("SELECT count(DISTINCT rank) FROM run");
        s.tensors = scalar("SELECT count(*) FROM tensor");
        s.files = scalar("SELECT count(*) FROM file");
        s.issues = scalar("SELECT count(*) FROM parse_issue");
        s.repeats =
            scalar("SELECT COALESCE((SELECT CAST(value AS INTEGER) FROM setting WHERE key = 'repeated_values'), 0)");
        Statement per_layout(conn_, "SELECT layout_id, count(*) FROM tensor GROUP BY layout_id");
        while (per_layout.step()) {
            auto it = layouts_.find(per_layout.int64(0));
            if (it != layouts_.end())
                s.series += per_layout.int64(1) * static_cast<std::int64_t>(it->second.ops.size());
        }
        return s;
    }

    std::vector<IssueRecord> issues(std::size_t limit) override {
        std::vector<IssueRecord> out;
        Statement q(conn_,
                    "SELECT f.path, i.line, i.reason, i.excerpt FROM parse_issue i JOIN file f ON f.id = i.file_id "
                    "ORDER BY i.id DESC LIMIT ?");
        q.bind(1, static_cast<std::int64_t>(limit));
        while (q.step()) out.push_back({q.text(0), q.int64(1), q.text(2), q.text(3)});
        return out;
    }

    // Every malformed line found, the ones only counted (beyond a file's cap) included.
    std::uint64_t issue_count() override {
        Statement q(conn_, version_ >= 8 ? "SELECT total(issues) FROM file" : "SELECT count(*) FROM parse_issue");
        return q.step() ? static_cast<std::uint64_t>(q.int64(0)) : 0;
    }

    std::vector<AnomalyRecord> anomalies(const AnomalyFilter& filter) override {
        ReadTransaction snapshot(conn_);
        std::vector<AnomalyRecord> out;
        // Without a step filter no step bound at all: a full-range bound makes SQLite walk anomaly_by_step, look
        // every row up by id and sort them back into id order, where a plain scan is already in id order.
        Statement q(conn_, ("SELECT " + stored_anomaly_columns("a.") +
                            " FROM anomaly a WHERE (?1 IS NULL OR a.source = ?1) AND (?2 IS NULL OR a.rank = ?2)" +
                            (filter.steps ? " AND a.step BETWEEN ?3 AND ?4" : "") + " ORDER BY a.id")
                               .c_str());
        if (filter.source) q.bind(1, std::string_view(*filter.source));
        if (filter.rank) q.bind(2, *filter.rank);
        if (filter.steps) {
            q.bind(3, filter.steps->min());
            q.bind(4, filter.steps->max());
        }
        while (q.step()) {
            if (filter.steps && !filter.steps->contains(q.int64(3))) continue;
            AnomalyRecord a = read_stored_anomaly(q, 0);
            out.push_back(std::move(a));
        }
        return out;
    }

    std::vector<EventRecord> events() override {
        std::vector<EventRecord> out;
        // A step-less event (a first "start") comes from info.log and the worker log alike: the table's UNIQUE
        // does not see NULL steps as equal, so the copies are left out here.
        Statement q(conn_,
                    "SELECT run_id, rank, step, kind, time, message FROM event e WHERE step IS NOT NULL OR id = "
                    "(SELECT min(id) FROM event d WHERE d.step IS NULL AND d.rank = e.rank AND d.kind = e.kind AND "
                    "d.time = e.time AND d.message = e.message) ORDER BY step IS NULL, step, rank, id");
        while (q.step()) {
            EventRecord e;
            e.run_id = q.int64(0);
            e.rank = static_cast<int>(q.int64(1));
            e.step = q.opt_int64(2);
            e.kind = q.text(3);
            e.time = q.text(4);
            e.message = q.text(5);
            out.push_back(std::move(e));
        }
        return out;
    }

    std::vector<RunConfigEntry> run_config(std::optional<int> rank) override {
        std::vector<RunConfigEntry> out;
        Statement q(
            conn_,
            "SELECT e.run_id, e.rank, e.step, e.message, r.path FROM event e LEFT JOIN run r ON r.id = e.run_id "
            "WHERE e.kind = ?1 AND (?2 IS NULL OR e.rank = ?2) ORDER BY e.rank, e.run_id, e.id");
        q.bind(1, std::string_view("config"));
        if (rank) q.bind(2, *rank);
        while (q.step()) {
            RunConfigEntry c;
            c.run_id = q.int64(0);
            c.rank = static_cast<int>(q.int64(1));
            c.step = q.opt_int64(2);
            split_config_message(q.text(3), c);
            std::string path = q.text(4);
            // Runs that are not folders carry a "#<what>#rank<R>" suffix (mindformers, tensorboard).
            if (const auto hash = path.find('#'); hash != std::string::npos) path.resize(hash);
            c.source = std::move(path);
            out.push_back(std::move(c));
        }
        return out;
    }

    std::vector<ThresholdUse> thresholds_used() override {
        Statement q(conn_, "SELECT value FROM setting WHERE key = ?1");
        q.bind(1, std::string_view(kThresholdsUsedSetting));
        return q.step() ? decode_threshold_uses(q.text(0)) : std::vector<ThresholdUse>{};
    }

    std::vector<CheckpointRecord> checkpoints() override {
        std::vector<CheckpointRecord> out;
        Statement q(conn_, kStoredCheckpointsQuery);
        while (q.step()) out.push_back(read_stored_checkpoint(q));
        return out;
    }

    ModuleInfo module_info(int rank, const std::string& tensor_name) override {
        ReadTransaction snapshot(conn_);
        ModuleInfo info;
        Statement st(conn_, "SELECT json FROM module_struct WHERE rank = ? AND module = ?");
        // A rank with several runs: its first run's stack (the spool ships the same, store/ship_spool.hpp).
        Statement sk(conn_,
                     "SELECT s.stack FROM stack_info s JOIN run r ON r.id = s.run_id WHERE r.rank = ? AND "
                     "s.module = ? ORDER BY s.run_id LIMIT 1");
        for (const std::string& candidate : module_candidates(tensor_name)) {
            st.bind(1, rank);
            st.bind(2, std::string_view(candidate));
            if (st.step()) info.structure = st.text(0);
            st.reset();
            sk.bind(1, rank);
            sk.bind(2, std::string_view(candidate));
            if (sk.step()) info.stack = sk.text(0);
            sk.reset();
            if (!info.structure.empty() || !info.stack.empty()) {
                info.module = candidate;
                return info;
            }
        }
        return info;
    }

    std::vector<std::pair<int, std::int64_t>> rank_last_steps() override {
        std::vector<std::pair<int, std::int64_t>> out;
        // A tensor's last step is in its last block: two index seeks (the key is (tensor_id, block, first_step)).
        // "<tag> vs samples" twins count samples, not steps: left out.
        Statement q(
            conn_,
            "SELECT r.rank, max((SELECT max(s.last_step) FROM sample_chunk s WHERE s.tensor_id = t.id AND s.block "
            "= (SELECT max(block) FROM sample_chunk WHERE tensor_id = t.id))) FROM tensor t JOIN run r ON r.id "
            "= t.run_id WHERE t.kind NOT LIKE '%\\_vs\\_samples' ESCAPE '\\' GROUP BY r.rank ORDER BY r.rank");
        while (q.step())
            if (!q.is_null(1)) out.emplace_back(static_cast<int>(q.int64(0)), q.int64(1));
        return out;
    }

    StoreCatalog catalog() override {
        ReadTransaction snapshot(conn_);
        load_dictionaries();
        StoreCatalog c;
        // Distinct (kind, layout) pairs by seeks on tensor_by_kind_layout, not a scan of every tensor: the next
        // layout of this kind, else the first layout of the next kind.
        Statement same_kind(
            conn_, "SELECT kind, layout_id FROM tensor WHERE kind = ? AND layout_id > ? ORDER BY layout_id LIMIT 1");
        Statement next_kind(conn_,
                            "SELECT kind, layout_id FROM tensor WHERE kind > ? ORDER BY kind, layout_id LIMIT 1");
        std::optional<std::string> after_kind;
        std::int64_t after_layout = 0;
        while (true) {
            Statement* kinds = &next_kind;
            bool found = false;
            if (after_kind) {
                same_kind.reset();
                same_kind.bind(1, std::string_view(*after_kind));
                same_kind.bind(2, after_layout);
                found = same_kind.step();
                if (found) kinds = &same_kind;
            }
            if (!found) {
                next_kind.reset();
                next_kind.bind(1, std::string_view(after_kind.value_or("")));
                found = next_kind.step();
            }
            if (!found) break;
            const std::string kind = kinds->text(0);
            after_kind = kind;
            after_layout = kinds->int64(1);
            if (c.kinds.empty() || c.kinds.back().first != kind) c.kinds.push_back({kind, {}});
            auto& ops = c.kinds.back().second;
            auto it = layouts_.find(after_layout);
            if (it == layouts_.end()) continue;
            for (std::size_t k = 0; k < it->second.ops.size(); ++k)
                if (it->second.slot[k] >= 0 && std::find(ops.begin(), ops.end(), it->second.ops[k]) == ops.end())
                    ops.push_back(it->second.ops[k]);
        }
        Statement ranks(conn_, "SELECT DISTINCT rank FROM run ORDER BY rank");
        while (ranks.step()) c.ranks.push_back(static_cast<int>(ranks.int64(0)));
        // The step range: kind_range, kept by the writer.
        // TensorBoard's "<tag> vs samples" twins (kind <kind>_vs_samples) count samples, not steps: not in it.
        Statement range(
            conn_,
            "SELECT min(min_step), max(max_step) FROM kind_range WHERE kind NOT LIKE '%\\_vs\\_samples' ESCAPE '\\'");
        if (range.step() && !range.is_null(0)) {
            c.min_step = range.int64(0);
            c.max_step = range.int64(1);
        }
        return c;
    }

    std::vector<std::int64_t> collected_steps(std::size_t limit) override {
        ReadTransaction snapshot(conn_);
        // One tensor per (run, msprobe kind) stands for its file: every tensor of a CSV gets the same steps.
        std::map<std::pair<std::int64_t, std::string>, std::int64_t> first;
        Statement tensors(conn_, "SELECT id, run_id, kind FROM tensor ORDER BY id");
        while (tensors.step())
            if (is_known_v1_prefix(tensors.text(2)))
                first.try_emplace({tensors.int64(1), tensors.text(2)}, tensors.int64(0));
        std::vector<std::int64_t> steps, recent;
        SampleChunkReader chunks(conn_);
        for (const auto& [key, id] : first) {
            chunks.recent_steps(id, limit, recent);
            steps.insert(steps.end(), recent.begin(), recent.end());
        }
        std::sort(steps.begin(), steps.end(), std::greater<>());
        steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
        if (steps.size() > limit) steps.resize(limit);
        return steps;
    }

    std::vector<RunSegment> run_segments() override {
        ReadTransaction snapshot(conn_);
        return read_run_segments(conn_, version_ >= 9);
    }

    std::vector<StepWallTime> step_times() override {
        if (version_ < 9) return {};
        ReadTransaction snapshot(conn_);
        // Per (rank, format, step): the time from the latest run holding it; then per step the earliest rank's.
        std::map<std::tuple<int, std::string, std::int64_t>,
                 std::pair<std::pair<std::int64_t, std::int64_t>, std::int64_t>>
            latest;
        Statement q(
            conn_,
            "SELECT r.rank, r.format, r.time_label, r.id, s.step, s.wall_ms FROM step_time s JOIN run r ON r.id "
            "= s.run_id");
        while (q.step()) {
            const auto order = run_order(q.text(2), q.int64(3));
            auto [it, fresh] =
                latest.try_emplace({static_cast<int>(q.int64(0)), q.text(1), q.int64(4)}, order, q.int64(5));
            if (!fresh && it->second.first < order) it->second = {order, q.int64(5)};
        }
        std::map<std::int64_t, std::int64_t> by_step;
        for (const auto& [key, v] : latest) {
            auto [it, fresh] = by_step.try_emplace(std::get<2>(key), v.second);
            if (!fresh) it->second = std::min(it->second, v.second);
        }
        std::vector<StepWallTime> out;
        out.reserve(by_step.size());
        for (const auto& [step, ms] : by_step) out.push_back({step, ms});
        return out;
    }

    std::vector<RankSeries> rank_series(const RankSeriesRequest& req) override {
        auto out = every_step(req);
        reduce_series(out, req.window);
        return out;
    }

    std::vector<ModuleRow> module_rows(const std::string& kind, int rank) override {
        ReadTransaction snapshot(conn_);
        std::vector<ModuleRow> rows;
        std::set<std::tuple<std::string, std::string, std::optional<std::int64_t>>> seen;
        Statement q(conn_, kModuleTensors);
        q.bind(1, rank);
        q.bind(2, std::string_view(kind));
        while (q.step()) {
            ModuleRow row{q.text(2), q.text(1), q.opt_int64(3)};
            if (seen.emplace(row.vpp_stage, row.name, row.micro_step).second) rows.push_back(std::move(row));
        }
        return rows;
    }

    // Reads only the rows asked for, and of each only the chunks of the window's steps.
    std::vector<std::vector<StepValue>> module_series(const ModuleSeriesRequest& req) override {
        ReadTransaction snapshot(conn_);
        load_dictionaries();
        std::map<std::tuple<std::string, std::string, std::optional<std::int64_t>>, std::size_t> index;
        for (std::size_t i = 0; i < req.rows.size(); ++i)
            index.emplace(std::make_tuple(req.rows[i].vpp_stage, req.rows[i].name, req.rows[i].micro_step), i);
        std::vector<std::vector<StepValue>> out(req.rows.size());
        const std::int64_t lo = req.window.lo.value_or(std::numeric_limits<std::int64_t>::min());
        const std::int64_t hi = req.window.hi.value_or(std::numeric_limits<std::int64_t>::max());
        Statement q(conn_, kModuleTensors);  // oldest run first: a restart's later value wins
        q.bind(1, req.rank);
        q.bind(2, std::string_view(req.kind));
        SampleChunkReader chunks(conn_);
        std::vector<SampleRow> rows;
        std::vector<StepValue> run;
        while (q.step()) {
            const auto it = index.find(std::make_tuple(q.text(1), q.text(2), q.opt_int64(3)));
            if (it == index.end()) continue;
            chunks.read(q.int64(0), lo, hi, rows);
            run.clear();
            for (const SampleRow& row : rows) {
                const Layout& layout = layouts_.at(row.layout_id);
                for (std::size_t k = 0; k < layout.ops.size(); ++k)
                    if (layout.ops[k] == req.op && layout.slot[k] >= 0)
                        run.push_back({row.step, row.values[layout.slot[k]]});
            }
            merge_later_run(out[it->second], run);
        }
        reduce_module_series(out, req.window);
        return out;
    }

    std::vector<RankSeries> every_step(const RankSeriesRequest& req) {
        ReadTransaction snapshot(conn_);
        if (!req.name_regex) return rank_series_from_blocks(req);
        load_dictionaries();
        std::optional<NamePattern> name_re;
        if (req.name_regex) name_re = NamePattern::compile_or_throw(*req.name_regex);
        struct Tensor {
            std::int64_t id;
            int rank;
            std::pair<std::int64_t, std::int64_t> run;  // its run's order: a restart's later run counts
        };
        std::vector<Tensor> tensors;
        Statement t(conn_,
                    "SELECT t.id, r.rank, t.name, r.id, r.time_label FROM tensor t JOIN run r ON r.id = t.run_id WHERE "
                    "t.kind = ?");
        t.bind(1, std::string_view(req.kind));
        while (t.step())
            if (!name_re || name_re->search(t.text(2)))
                tensors.push_back({t.int64(0), static_cast<int>(t.int64(1)), run_order(t.text(4), t.int64(3))});
        std::int64_t hi = std::numeric_limits<std::int64_t>::min();
        SampleChunkReader chunks(conn_);
        for (const auto& tensor : tensors)
            if (const auto last = chunks.last_step(tensor.id)) hi = std::max(hi, *last);
        const std::int64_t lo = req.last_steps > 0 && hi != std::numeric_limits<std::int64_t>::min()
                                    ? hi - req.last_steps + 1
                                    : std::numeric_limits<std::int64_t>::min();
        const AggregateRule rule = aggregate_rule(req.op);
        struct Acc {
            std::pair<std::int64_t, std::int64_t> run{std::numeric_limits<std::int64_t>::min(), 0};
            StepAggregate agg;
        };
        std::map<int, std::map<std::int64_t, Acc>> acc;
        std::vector<SampleRow> rows;
        for (const auto& tensor : tensors) {
            chunks.read(tensor.id, lo, std::numeric_limits<std::int64_t>::max(), rows);
            auto& per_step = acc[tensor.rank];
            for (const SampleRow& row : rows) {
                const Layout& layout = layouts_.at(row.layout_id);
                int slot = -1;
                for (std::size_t k = 0; k < layout.ops.size(); ++k)
                    if (layout.ops[k] == req.op) slot = layout.slot[k];
                if (slot < 0) continue;
                Acc& a = per_step[row.step];
                if (tensor.run < a.run) continue;  // an earlier run's value of a step a restart trained again
                if (a.run < tensor.run) a = Acc{tensor.run, StepAggregate{}};
                add_value(rule, a.agg, row.values[slot]);
            }
        }
        std::vector<RankSeries> out;
        for (auto& [rank, per_step] : acc) {
            if (per_step.empty()) continue;  // no rows in range: no series (as rank_block answers)
            RankSeries rs;
            rs.rank = rank;
            for (const auto& [step, a] : per_step) rs.points.push_back({step, final_value(rule, a.agg)});
            out.push_back(std::move(rs));
        }
        return out;
    }

    AnomalyGroupPage anomaly_groups(const AnomalyGroupRequest& r) override {
        ReadTransaction snapshot(conn_);
        AnomalyGroupPage page;
        {
            Statement n(conn_, "SELECT count(*) FROM anomaly");
            n.step();
            page.total_anomalies = n.int64(0);
        }
        const char* where =
            "(?1 IS NULL OR g.source = ?1) AND (?2 IS NULL OR g.rule = ?2) AND (?3 IS NULL OR g.kind = ?3) AND (?4 IS "
            "NULL OR g.rank = ?4)";
        auto bind_filters = [&](Statement& st) {
            if (r.source) st.bind(1, std::string_view(*r.source));
            if (r.rule) st.bind(2, std::string_view(*r.rule));
            if (r.kind) st.bind(3, std::string_view(*r.kind));
            if (r.rank) st.bind(4, *r.rank);
        };
        const std::string select =
            "SELECT " + stored_anomaly_columns("a.") +
            ", g.count, g.first_step, g.last_step, g.best FROM anomaly_group g JOIN anomaly a ON "
            "a.id = g.face_id ";
        auto add_face = [&](const Statement& faces) {
            AnomalyGroup g;
            g.face = read_stored_anomaly(faces, 0);
            g.count = static_cast<int>(faces.int64(kStoredAnomalyColumnCount));
            g.first_step = faces.int64(kStoredAnomalyColumnCount + 1);
            g.last_step = faces.int64(kStoredAnomalyColumnCount + 2);
            g.rank_score = faces.real(kStoredAnomalyColumnCount + 3);
            page.groups.push_back(std::move(g));
        };
        if (!r.name_regex) {
            Statement count(conn_, (std::string("SELECT count(*) FROM anomaly_group g WHERE ") + where).c_str());
            bind_filters(count);
            count.step();
            page.total_groups = count.int64(0);
            Statement faces(conn_,
                            (select + "WHERE " + where + " ORDER BY g.best DESC, g.id LIMIT ?5 OFFSET ?6").c_str());
            bind_filters(faces);
            faces.bind(5, static_cast<std::int64_t>(r.limit));
            faces.bind(6, static_cast<std::int64_t>(r.offset));
            while (faces.step()) add_face(faces);
            return page;
        }
        // A name regex is matched here: walk every matching group in order, keep the page, count the rest.
        const NamePattern re = NamePattern::compile_or_throw(*r.name_regex);
        Statement ids(conn_, (std::string("SELECT g.id, g.name FROM anomaly_group g WHERE ") + where +
                              " ORDER BY g.best DESC, g.id")
                                 .c_str());
        bind_filters(ids);
        std::vector<std::int64_t> wanted;
        while (ids.step()) {
            if (!re.search(ids.text(1))) continue;
            const auto pos = static_cast<std::size_t>(page.total_groups++);
            if (pos >= r.offset && pos < r.offset + r.limit) wanted.push_back(ids.int64(0));
        }
        Statement face(conn_, (select + "WHERE g.id = ?").c_str());
        for (auto id : wanted) {
            face.reset();
            face.bind(1, id);
            if (face.step()) add_face(face);
        }
        return page;
    }

    AnomalyMarks anomaly_marks(double min_score, std::int64_t from_step) override {
        ReadTransaction snapshot(conn_);
        AnomalyMarks m;
        Statement n(conn_, "SELECT count(*) FROM anomaly");
        n.step();
        m.total = n.int64(0);
        Statement q(conn_, "SELECT rank, step FROM anomaly_breadth WHERE step >= ? AND max_score >= ?");
        q.bind(1, from_step);
        q.bind(2, min_score);
        while (q.step()) m.marks.emplace_back(static_cast<int>(q.int64(0)), q.int64(1));
        return m;
    }

private:
    // Every parameter of the kind: the writer's per-rank step aggregates answer without touching the samples.
    std::vector<RankSeries> rank_series_from_blocks(const RankSeriesRequest& req) {
        Statement last(conn_, "SELECT max(block) FROM rank_block WHERE kind = ? AND op = ?");
        last.bind(1, std::string_view(req.kind));
        last.bind(2, std::string_view(req.op));
        if (!last.step() || last.is_null(0)) return {};
        const std::int64_t last_block = last.int64(0);
        std::int64_t lo_block = std::numeric_limits<std::int64_t>::min();
        std::int64_t lo = std::numeric_limits<std::int64_t>::min();
        if (req.last_steps > 0) {
            std::int64_t hi = std::numeric_limits<std::int64_t>::min();
            Statement top(conn_, "SELECT data FROM rank_block WHERE kind = ? AND op = ? AND block = ?");
            top.bind(1, std::string_view(req.kind));
            top.bind(2, std::string_view(req.op));
            top.bind(3, last_block);
            while (top.step()) {
                const auto bytes = static_cast<std::size_t>(sqlite3_column_bytes(top.raw(), 0));
                if (bytes >= kBlockEntryBytes)  // entries are step-sorted: the last one is the block's latest
                    hi = std::max(hi, decode_entry(static_cast<const char*>(sqlite3_column_blob(top.raw(), 0)) + bytes -
                                                   kBlockEntryBytes)
                                          .step);
            }
            if (hi == std::numeric_limits<std::int64_t>::min()) return {};
            lo = hi - req.last_steps + 1;
            lo_block = block_of(lo);
        }
        Statement q(conn_, "SELECT rank, data FROM rank_block WHERE kind = ? AND op = ? AND block >= ?");
        q.bind(1, std::string_view(req.kind));
        q.bind(2, std::string_view(req.op));
        q.bind(3, lo_block);
        // Rows come block by block, ranks ascending in each: appending keeps every rank's steps sorted.
        std::map<int, RankSeries> by_rank;
        RankSeries* current = nullptr;
        while (q.step()) {
            const int rank = static_cast<int>(q.int64(0));
            if (!current || current->rank != rank) {
                current = &by_rank[rank];
                current->rank = rank;
            }
            const auto* data = static_cast<const char*>(sqlite3_column_blob(q.raw(), 1));
            const auto bytes = static_cast<std::size_t>(sqlite3_column_bytes(q.raw(), 1));
            for (std::size_t off = 0; off + kBlockEntryBytes <= bytes; off += kBlockEntryBytes) {
                const StepAggregate e = decode_entry(data + off);
                if (e.step >= lo) current->points.push_back({e.step, aggregate_value(req.op, e)});
            }
        }
        std::vector<RankSeries> out;
        out.reserve(by_rank.size());
        for (auto& [_, rs] : by_rank)
            if (!rs.points.empty()) out.push_back(std::move(rs));
        return out;
    }

    void load_dictionaries() {
        Statement l(conn_, "SELECT id, ops FROM layout");
        while (l.step()) layouts_[l.int64(0)] = parse_layout(l.text(1));
    }

    std::string_view text_of(std::int64_t id) {
        auto it = texts_.find(id);
        if (it != texts_.end()) return it->second;
        Statement q(conn_, "SELECT text FROM text_value WHERE id = ?");
        q.bind(1, id);
        std::string t = q.step() ? q.text(0) : std::string();
        return texts_.emplace(id, std::move(t)).first->second;
    }

    Connection conn_;
    int version_ = kSchemaVersion;
    std::unordered_map<std::int64_t, Layout> layouts_;
    std::unordered_map<std::int64_t, std::string> texts_;
};

}  // namespace

std::unique_ptr<Reader> open_sqlite_reader(const std::string& path, const StoreAccess& access) {
    std::string error;
    const auto real = resolve_store_path(path, access, false, error);
    if (!real) throw SqliteError(error, SQLITE_CANTOPEN);
    return std::make_unique<SqliteReader>(*real);
}

}  // namespace msmon
