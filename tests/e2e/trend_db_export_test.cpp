// `msmon export --trend-db` writes what msprobe's data2db writes: the same tables, rows and values
// as data2db's own database for the real `wg` fixture, and data2db's mapping rules on a tree built here.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

namespace fs = std::filesystem;

// One SQLite value, compared exactly: storage class, then integer, the double's bits, or the text.
struct Cell {
    int type = SQLITE_NULL;
    std::int64_t i = 0;
    double d = 0;
    std::string t;
    bool operator==(const Cell& o) const {
        if (type != o.type) return false;
        if (type == SQLITE_INTEGER) return i == o.i;
        if (type == SQLITE_FLOAT) return std::memcmp(&d, &o.d, sizeof d) == 0;
        if (type == SQLITE_NULL) return true;
        return t == o.t;
    }
    bool operator<(const Cell& o) const {
        if (type != o.type) return type < o.type;
        if (type == SQLITE_INTEGER) return i < o.i;
        if (type == SQLITE_FLOAT) return std::memcmp(&d, &o.d, sizeof d) < 0;
        return t < o.t;
    }
};
using Row = std::vector<Cell>;

std::string show(const Cell& c) {
    std::ostringstream s;
    s.precision(17);
    if (c.type == SQLITE_NULL) s << "NULL";
    else if (c.type == SQLITE_INTEGER) s << c.i;
    else if (c.type == SQLITE_FLOAT) s << c.d << "(real" << (std::signbit(c.d) ? ",neg" : "") << ")";
    else s << "'" << c.t << "'";
    return s.str();
}

void PrintTo(const Cell& c, std::ostream* os) {
    *os << show(c);
}

std::string show(const Row& r) {
    std::string out = "(";
    for (std::size_t k = 0; k < r.size(); ++k) out += (k ? ", " : "") + show(r[k]);
    return out + ")";
}

Cell integer(std::int64_t v) {
    return {SQLITE_INTEGER, v, 0, {}};
}
Cell real(double v) {
    return {SQLITE_FLOAT, 0, v, {}};
}
Cell text(const std::string& v) {
    return {SQLITE_TEXT, 0, 0, v};
}
Cell null() {
    return {};
}

class Db {
public:
    explicit Db(const std::string& path) {
        if (sqlite3_open_v2(path.c_str(), &h_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
            ADD_FAILURE() << "cannot open " << path;
            sqlite3_close(h_);
            h_ = nullptr;
        }
    }
    ~Db() { sqlite3_close(h_); }
    Db(const Db&) = delete;
    Db& operator=(const Db&) = delete;

    std::vector<Row> rows(const std::string& sql) {
        std::vector<Row> out;
        if (!h_) return out;
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(h_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
            ADD_FAILURE() << "cannot prepare '" << sql << "': " << sqlite3_errmsg(h_);
            return out;
        }
        while (sqlite3_step(st) == SQLITE_ROW) {
            Row r;
            for (int c = 0; c < sqlite3_column_count(st); ++c) {
                Cell cell;
                cell.type = sqlite3_column_type(st, c);
                if (cell.type == SQLITE_INTEGER) cell.i = sqlite3_column_int64(st, c);
                if (cell.type == SQLITE_FLOAT) cell.d = sqlite3_column_double(st, c);
                if (cell.type == SQLITE_TEXT || cell.type == SQLITE_BLOB)
                    cell.t.assign(reinterpret_cast<const char*>(sqlite3_column_blob(st, c)),
                                  static_cast<std::size_t>(sqlite3_column_bytes(st, c)));
                r.push_back(std::move(cell));
            }
            out.push_back(std::move(r));
        }
        sqlite3_finalize(st);
        return out;
    }
    std::vector<std::string> columns(const std::string& table) {
        std::vector<std::string> out;
        for (const auto& r : rows("SELECT name FROM pragma_table_info('" + table + "')")) out.push_back(r[0].t);
        return out;
    }
    // global_stats' single row as column → value.
    std::map<std::string, Cell> global_stats() {
        std::map<std::string, Cell> out;
        const auto names = columns("global_stats");
        const auto rs = rows("SELECT * FROM global_stats");
        EXPECT_EQ(rs.size(), 1u) << "global_stats holds one row";
        if (rs.size() == 1)
            for (std::size_t k = 0; k < names.size(); ++k) out[names[k]] = rs[0][k];
        return out;
    }

private:
    sqlite3* h_ = nullptr;
};

std::set<std::string> split_set(const std::string& s) {
    std::set<std::string> out;
    std::size_t start = 0;
    while (true) {
        const auto comma = s.find(',', start);
        out.insert(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) return out;
        start = comma + 1;
    }
}

// trend_data keyed by its primary key; each value is the row's stat cells.
std::map<Row, Row> trend_rows(Db& db) {
    std::map<Row, Row> out;
    for (auto& r : db.rows("SELECT * FROM trend_data")) {
        Row key(r.begin(), r.begin() + 4), values(r.begin() + 4, r.end());
        EXPECT_TRUE(out.emplace(std::move(key), std::move(values)).second);
    }
    return out;
}

// Tags and links identified by content: data2db numbers tags in Python set order, which is not defined.
const char* kTagsSql =
    "SELECT tag_name, category, metric_name FROM monitoring_tags JOIN monitoring_metrics USING(metric_id) "
    "ORDER BY 1, 2, 3";
const char* kLinksSql =
    "SELECT tag_name, category, metric_name, target_id FROM tag_target_mapping "
    "JOIN monitoring_tags USING(tag_id) JOIN monitoring_metrics USING(metric_id) ORDER BY 1, 2, 3, 4";

void expect_same_database(const std::string& got_path, const std::string& ref_path) {
    Db got(got_path), ref(ref_path);
    SCOPED_TRACE("export " + got_path + " vs data2db's " + ref_path);

    // Schema: the same tables, the fixed ones with data2db's very CREATE text, trend_data's stat columns in
    // data2db's order.
    const std::string tables_sql =
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name <> 'sqlite_sequence' "
        "ORDER BY name";
    const auto got_tables = got.rows(tables_sql), ref_tables = ref.rows(tables_sql);
    ASSERT_EQ(got_tables.size(), ref_tables.size());
    for (std::size_t k = 0; k < ref_tables.size(); ++k) {
        EXPECT_EQ(got_tables[k][0].t, ref_tables[k][0].t);
        if (ref_tables[k][0].t != "global_stats") {
            EXPECT_EQ(got_tables[k][1].t, ref_tables[k][1].t);
        }
    }
    EXPECT_EQ(got.columns("trend_data"), ref.columns("trend_data"));
    const auto ref_gs_cols = ref.columns("global_stats"), got_gs_cols = got.columns("global_stats");
    EXPECT_EQ(std::set<std::string>(got_gs_cols.begin(), got_gs_cols.end()),
              std::set<std::string>(ref_gs_cols.begin(), ref_gs_cols.end()));
    ASSERT_GE(got_gs_cols.size(), 3u);
    EXPECT_EQ(std::vector<std::string>(got_gs_cols.begin(), got_gs_cols.begin() + 3),
              (std::vector<std::string>{"min_step", "max_step", "max_rank"}));
    const std::string types_sql =
        "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info('global_stats') ORDER BY name";
    EXPECT_EQ(got.rows(types_sql), ref.rows(types_sql));

    // Ids data2db defines: metrics in METRICS_TRENDVIS_SUPPORTED order; targets metric by metric, each in the
    // order its rows list them (every wg file lists the parameters in one order, so the ids are defined
    // here).
    for (const char* sql : {"SELECT * FROM monitoring_metrics ORDER BY metric_id",
                            "SELECT * FROM monitoring_targets ORDER BY target_id"}) {
        const auto g = got.rows(sql), r = ref.rows(sql);
        ASSERT_EQ(g.size(), r.size()) << sql;
        for (std::size_t k = 0; k < r.size(); ++k)
            EXPECT_EQ(g[k], r[k]) << sql << ": " << show(g[k]) << " vs " << show(r[k]);
    }
    EXPECT_EQ(got.rows(kTagsSql), ref.rows(kTagsSql));
    EXPECT_EQ(got.rows(kLinksSql), ref.rows(kLinksSql));
    // AUTOINCREMENT's counters, where the next id would come from (data2db's counts ignored inserts too).
    const char* sequence_sql = "SELECT name, seq FROM sqlite_sequence ORDER BY name";
    EXPECT_EQ(got.rows(sequence_sql), ref.rows(sequence_sql));
    EXPECT_EQ(got.rows("SELECT count(*) FROM tag_target_mapping"), ref.rows("SELECT count(*) FROM tag_target_mapping"));

    // global_stats: the step range and rank exactly; each metric's stat list as a set (data2db joins a set).
    auto g = got.global_stats(), r = ref.global_stats();
    for (const char* k : {"min_step", "max_step", "max_rank"}) EXPECT_EQ(g[k], r[k]) << k << ": " << show(g[k]);
    for (const auto& [name, cell] : r) {
        if (name == "min_step" || name == "max_step" || name == "max_rank") continue;
        ASSERT_EQ(g[name].type, SQLITE_TEXT) << name;
        EXPECT_EQ(split_set(g[name].t), split_set(cell.t)) << name;
    }

    // trend_data: every row, every value bit for bit (NULL where data2db has NULL).
    const auto got_rows = trend_rows(got), ref_rows = trend_rows(ref);
    EXPECT_EQ(got_rows.size(), ref_rows.size());
    std::size_t mismatches = 0;
    for (const auto& [key, values] : ref_rows) {
        auto it = got_rows.find(key);
        if (it == got_rows.end()) {
            if (++mismatches <= 10) ADD_FAILURE() << "missing trend_data row " << show(key);
        } else if (it->second != values) {
            if (++mismatches <= 10)
                ADD_FAILURE() << "row " << show(key) << ": " << show(it->second) << " vs " << show(values);
        }
    }
    EXPECT_EQ(mismatches, 0u);
}

TEST(TrendDbExport, wg_fixture_export_equals_msprobe_data2db_database) {
    const std::string shared = shared_dir();
    if (shared.empty())
        MSMON_SKIP_UNLESS_REQUIRED(
            "../shared is absent: the real msprobe fixture and data2db's database are not available");
    const std::string fixture = shared + "/fixtures/msprobe-real/wg";
    const std::string reference = shared + "/fixtures/msprobe-real/csv2db-wg/monitor_data.trend.db";
    TempDir tmp;
    const auto env = isolated_env(tmp);

    // Through a store given with --db ...
    auto ingest = run({program("msmon"), "ingest", fixture, "--db", tmp / "store.db"}, env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    auto exported = run({program("msmon"), "export", "--db", tmp / "store.db", "--trend-db", tmp / "out"}, env);
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    EXPECT_NE(exported.out.find("3204 rows"), std::string::npos) << exported.out;
    expect_same_database(tmp / "out/monitor_data.trend.db", reference);

    // ... and straight from the monitored folder (ingested into its default store first).
    auto direct = run({program("msmon"), "export", fixture, "--trend-db", tmp / "out-dir"}, env);
    ASSERT_EQ(direct.exit_code, 0) << direct.err;
    expect_same_database(tmp / "out-dir/monitor_data.trend.db", reference);
}

// A small monitor tree with what data2db has rules for: nan, ±inf, values past ±1e9, -0.0, micro_step columns
// on two ranks, a cc row data2db skips, an L2 file and an `id` column it ignores, an older run folder.
void write_tree(const std::string& root) {
    const std::string r0 = root + "/Dec03_21-34-40-rank0-1a2b3c4d", r0_old = root + "/Dec03_20-00-00-rank0-0f0f0f0f",
                      r1 = root + "/Dec03_21-34-41-rank1-2b3c4d5e";
    for (const auto& d : {r0, r0_old, r1}) fs::create_directories(d);
    write_file(r0 + "/actv_0-0.csv",
               "vpp_stage,name,step,micro_step,norm,nans,shape,dtype\n"
               "0,decoder.layers.3.mlp.input,0,0,1.5,0.0,\"[2, 4]\",torch.float32\n"
               "0,decoder.layers.3.mlp.input,0,1,2.5,0.0,\"[2, 4]\",torch.float32\n");
    write_file(r0 + "/actv_1-1.csv",
               "vpp_stage,name,step,micro_step,norm,nans,shape,dtype\n"
               "0,decoder.layers.3.mlp.input,1,0,3.5,0.0,\"[2, 4]\",torch.float32\n"
               "0,decoder.layers.3.mlp.input,1,1,4.5,0.0,\"[2, 4]\",torch.float32\n"
               "0,decoder.layers.3.mlp.input,1,2,nan,8.0,\"[2, 4]\",torch.float32\n");
    write_file(r0 + "/grad_reduced_0-0.csv",
               "vpp_stage,name,step,norm,min,max,mean,id,shape,dtype\n"
               "0,decoder.layers.3.mlp.linear_fc1.weight,0,nan,inf,-inf,2000000000.0,7.0,[4],torch.float32\n"
               "1,embedding.word_embeddings.weight,0,1000000000.0,-3e+16,-0.0,123.25,nan,[4],torch.float32\n");
    write_file(r0 + "/grad_reduced_1-1.csv",
               "vpp_stage,name,step,norm,min,max,mean,id,shape,dtype\n"
               "0,decoder.layers.3.mlp.linear_fc1.weight,1,0.5,-1000000000.5,1e-06,-0.0,nan,[4],torch.float32\n");
    // A cc row: no "vpp:" prefix, so msprobe shifted the step into the third field.
    write_file(r0 + "/other_0-0.csv", "vpp_stage,name,step,norm,min,max\nall_reduce,0.5,0,1.0,2.0,3.0\n");
    write_file(r0 + "/attention_hook_0-0.csv",
               "vpp_stage,name,step,micro_step,entropy,softmax_max\n0,decoder.layers.3.self_attention,0,0,0."
               "7,0.9\n");
    write_file(r0_old + "/grad_reduced_99-99.csv",
               "vpp_stage,name,step,norm,min,max,mean,id,shape,dtype\n"
               "0,decoder.layers.3.mlp.linear_fc1.weight,99,1.0,1.0,1.0,1.0,nan,[4],torch.float32\n");
    std::string mbs = "vpp_stage,name,step,micro_step,norm,min,max,shape,dtype\n";
    for (int micro = 0; micro < 4; ++micro)
        mbs += "0,decoder.layers.3.mlp.linear_fc1.weight,0," + std::to_string(micro) + "," +
               std::to_string(10 + micro) + ".0,-1.0,1.0,[4],torch.float32\n";
    write_file(r1 + "/grad_unreduced_0-0.csv", mbs);
    write_file(r1 + "/grad_reduced_0-0.csv",
               "vpp_stage,name,step,norm,min,max,mean,id,shape,dtype\n"
               "0,decoder.layers.3.mlp.linear_fc1.weight,0,9.0,-2.0,2.0,0.25,nan,[4],torch.float32\n");
}

struct BuiltStore {
    TempDir tmp;
    std::map<std::string, std::string> env = isolated_env(tmp);
    std::string db = tmp / "store.db";
    BuiltStore() {
        write_tree(tmp / "monitor_output");
        auto r = run({program("msmon"), "ingest", tmp / "monitor_output", "--db", db}, env);
        EXPECT_EQ(r.exit_code, 0) << r.err;
    }
    CommandResult export_to(const std::string& out, const std::vector<std::string>& extra = {}) {
        std::vector<std::string> argv = {program("msmon"), "export", "--db", db, "--trend-db", out};
        argv.insert(argv.end(), extra.begin(), extra.end());
        return run(argv, env);
    }
};

TEST(TrendDbExport, micro_step_true_maps_steps_values_targets_and_tags_as_data2db) {
    BuiltStore store;
    auto r = store.export_to(store.tmp / "out");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("1 older run folder(s) left out"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("1 row(s) left out"), std::string::npos) << r.err;
    Db db(store.tmp / "out/monitor_data.trend.db");

    EXPECT_EQ(
        db.rows("SELECT * FROM monitoring_metrics ORDER BY metric_id"),
        (std::vector<Row>{
            {integer(1), text("actv")}, {integer(2), text("grad_unreduced")}, {integer(3), text("grad_reduced")}}))
        << "supported kinds only (no attention_hook; no other: its only row is skipped), in data2db's order";
    EXPECT_EQ(db.rows("SELECT * FROM monitoring_targets ORDER BY target_id"),
              (std::vector<Row>{{integer(1), text("decoder.layers.3.mlp.input"), integer(0), integer(0)},
                                {integer(2), text("decoder.layers.3.mlp.linear_fc1.weight"), integer(0), integer(0)},
                                {integer(3), text("embedding.word_embeddings.weight"), integer(1), integer(0)}}));

    // Micro-batches per step: step 0 has 4 (rank 1's grad_unreduced), step 1 has 3 (actv) → prefix 0, 4; 7 in
    // all. The older rank-0 folder's step 99 is not read.
    auto gs = db.global_stats();
    EXPECT_EQ(gs["min_step"], integer(0));
    EXPECT_EQ(gs["max_step"], integer(6));
    EXPECT_EQ(gs["max_rank"], integer(1));
    EXPECT_EQ(gs["actv"], text("norm,nans"));
    EXPECT_EQ(gs["grad_unreduced"], text("norm,min,max"));
    EXPECT_EQ(gs["grad_reduced"], text("norm,min,max,mean"));
    EXPECT_EQ(gs["other"], text("norm,min,max")) << "data2db lists a metric's stats even when all its rows are skipped";
    EXPECT_EQ(gs.size(), 7u);
    EXPECT_EQ(db.columns("trend_data"), (std::vector<std::string>{"rank", "step", "target_id", "metric_id", "norm",
                                                                  "min", "max", "nans", "mean"}));

    const double big = 1e9;
    const std::vector<Row> expected = {
        // rank, step', target, metric, norm, min, max, nans, mean
        {integer(0), integer(0), integer(1), integer(1), real(1.5), null(), null(), real(0.0), null()},
        {integer(0), integer(0), integer(2), integer(3), null(), real(big + 1), real(-big - 1), null(), real(big)},
        {integer(0), integer(0), integer(3), integer(3), real(big), real(-big), real(0.0), null(), real(123.25)},
        {integer(0), integer(1), integer(1), integer(1), real(2.5), null(), null(), real(0.0), null()},
        {integer(0), integer(4), integer(1), integer(1), real(3.5), null(), null(), real(0.0), null()},
        {integer(0), integer(4), integer(2), integer(3), real(0.5), real(-big), real(1e-06), null(), real(0.0)},
        {integer(0), integer(5), integer(1), integer(1), real(4.5), null(), null(), real(0.0), null()},
        {integer(0), integer(6), integer(1), integer(1), null(), null(), null(), real(8.0), null()},
        {integer(1), integer(0), integer(2), integer(2), real(10.0), real(-1.0), real(1.0), null(), null()},
        {integer(1), integer(0), integer(2), integer(3), real(9.0), real(-2.0), real(2.0), null(), real(0.25)},
        {integer(1), integer(1), integer(2), integer(2), real(11.0), real(-1.0), real(1.0), null(), null()},
        {integer(1), integer(2), integer(2), integer(2), real(12.0), real(-1.0), real(1.0), null(), null()},
        {integer(1), integer(3), integer(2), integer(2), real(13.0), real(-1.0), real(1.0), null(), null()},
    };
    const auto got = db.rows("SELECT * FROM trend_data ORDER BY rank, step, target_id, metric_id");
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t k = 0; k < expected.size(); ++k)
        EXPECT_EQ(got[k], expected[k]) << "row " << k << ": " << show(got[k]) << ", expected " << show(expected[k]);

    // Tags: parts of the name ("module"), "<word>.<number>" pairs ("layer"), per metric, linked to its
    // targets.
    using Tag = std::tuple<std::string, std::string, std::string>;
    std::set<Tag> tags;
    for (const auto& t : db.rows(kTagsSql)) tags.insert({t[0].t, t[1].t, t[2].t});
    std::set<Tag> expected_tags;
    for (const char* part : {"decoder", "layers", "mlp", "input"}) expected_tags.insert({part, "module", "actv"});
    for (const char* metric : {"grad_unreduced", "grad_reduced"})
        for (const char* part : {"decoder", "layers", "mlp", "linear_fc1", "weight"})
            expected_tags.insert({part, "module", metric});
    for (const char* metric : {"actv", "grad_unreduced", "grad_reduced"})
        expected_tags.insert({"layers.3", "layer", metric});
    for (const char* part : {"embedding", "word_embeddings"}) expected_tags.insert({part, "module", "grad_reduced"});
    EXPECT_EQ(tags, expected_tags);
    EXPECT_EQ(db.rows("SELECT count(*) FROM monitoring_tags"), (std::vector<Row>{{integer(19)}}));
    EXPECT_EQ(db.rows("SELECT seq FROM sqlite_sequence WHERE name = 'monitoring_targets'"),
              (std::vector<Row>{{integer(4)}}))
        << "one INSERT OR IGNORE per target per metric, as data2db";
    const auto links = db.rows(kLinksSql);
    EXPECT_EQ(links.size(), 5u + 6u + 6u + 3u);
    EXPECT_EQ(db.rows("SELECT count(*) FROM tag_target_mapping WHERE target_id = 3"), (std::vector<Row>{{integer(3)}}));
}

TEST(TrendDbExport, micro_step_false_keeps_steps_and_micro_steps_as_written) {
    BuiltStore store;
    auto r = store.export_to(store.tmp / "out", {"--micro-step", "false"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    Db db(store.tmp / "out/monitor_data.trend.db");
    const std::string name = "decoder.layers.3.mlp.linear_fc1.weight";
    EXPECT_EQ(db.rows("SELECT * FROM monitoring_targets ORDER BY target_id"),
              (std::vector<Row>{{integer(1), text("decoder.layers.3.mlp.input"), integer(0), integer(0)},
                                {integer(2), text("decoder.layers.3.mlp.input"), integer(0), integer(1)},
                                {integer(3), text("decoder.layers.3.mlp.input"), integer(0), integer(2)},
                                {integer(4), text(name), integer(0), integer(0)},
                                {integer(5), text(name), integer(0), integer(1)},
                                {integer(6), text(name), integer(0), integer(2)},
                                {integer(7), text(name), integer(0), integer(3)},
                                {integer(8), text("embedding.word_embeddings.weight"), integer(1), integer(0)}}));
    auto gs = db.global_stats();
    EXPECT_EQ(gs["min_step"], integer(0));
    EXPECT_EQ(gs["max_step"], integer(1));
    EXPECT_EQ(db.rows("SELECT rank, step, target_id, metric_id, norm FROM trend_data WHERE metric_id = 1 "
                      "ORDER BY 1, 2, 3"),
              (std::vector<Row>{{integer(0), integer(0), integer(1), integer(1), real(1.5)},
                                {integer(0), integer(0), integer(2), integer(1), real(2.5)},
                                {integer(0), integer(1), integer(1), integer(1), real(3.5)},
                                {integer(0), integer(1), integer(2), integer(1), real(4.5)},
                                {integer(0), integer(1), integer(3), integer(1), null()}}));
    EXPECT_EQ(db.rows("SELECT count(*) FROM trend_data"), (std::vector<Row>{{integer(13)}}));
}

TEST(TrendDbExport, cli_contract_help_usage_errors_and_replacing_an_existing_database) {
    BuiltStore store;
    auto help = run({program("msmon"), "export", "--help"}, store.env);
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find("--trend-db OUTDIR"), std::string::npos) << help.out;
    EXPECT_NE(help.out.find("is replaced"), std::string::npos) << "--help says what happens to an existing database";
    auto top = run({program("msmon"), "--help"}, store.env);
    EXPECT_NE(top.out.find("export"), std::string::npos);
    EXPECT_EQ(top.out.find("not built yet"), std::string::npos);

    auto missing = run({program("msmon"), "export", "--db", store.db}, store.env);
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.err.find("--trend-db"), std::string::npos) << missing.err;
    EXPECT_EQ(
        run({program("msmon"), "export", store.tmp / "monitor_output", "--db", store.db, "--trend-db", store.tmp / "o"},
            store.env)
            .exit_code,
        2);
    EXPECT_EQ(store.export_to(store.tmp / "o", {"--micro-step", "maybe"}).exit_code, 2);
    EXPECT_EQ(run({program("msmon"), "export", "--trend-db", store.tmp / "o"}, store.env).exit_code, 2);
    auto no_store =
        run({program("msmon"), "export", "--db", store.tmp / "absent.db", "--trend-db", store.tmp / "o"}, store.env);
    EXPECT_EQ(no_store.exit_code, 1);
    EXPECT_FALSE(fs::exists(store.tmp / "o"));

    // OUTDIR that is a file: a runtime failure, nothing written.
    write_file(store.tmp / "plain-file", "x");
    auto not_dir = store.export_to(store.tmp / "plain-file");
    EXPECT_EQ(not_dir.exit_code, 1);
    EXPECT_NE(not_dir.err.find("not a folder"), std::string::npos) << not_dir.err;

    // An existing database (here not even SQLite) and a stale journal beside it are replaced, as data2db
    // does.
    const std::string out = store.tmp / "out";
    fs::create_directories(out);
    write_file(out + "/monitor_data.trend.db", "an old file");
    write_file(out + "/monitor_data.trend.db-journal", "a stale journal");
    auto replaced = store.export_to(out);
    ASSERT_EQ(replaced.exit_code, 0) << replaced.err;
    {
        Db db(out + "/monitor_data.trend.db");
        EXPECT_EQ(db.rows("SELECT count(*) FROM trend_data"), (std::vector<Row>{{integer(13)}}));
    }
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(out)) left.push_back(e.path().filename().string());
    EXPECT_EQ(left, (std::vector<std::string>{"monitor_data.trend.db"})) << "no journal, no temporary file left";

    // Exporting again gives the same database.
    auto again = store.export_to(out);
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(again.out.substr(0, again.out.find(" (")), replaced.out.substr(0, replaced.out.find(" (")));
}

}  // namespace
}  // namespace msmon::test
