// msmon's store → msprobe data2db's monitor_data.trend.db, with data2db's ids. Two passes over one
// read snapshot: the first finds targets, stats and each step's micro-batch count, the second writes rows.
#include "store/trend_db_export.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/layout/monitor_layout.hpp"
#include "core/text/number_text.hpp"
#include "store/sample_chunks.hpp"
#include "store/schema.hpp"
#include "store/sqlite_handle.hpp"

namespace msmon {

namespace {

namespace fs = std::filesystem;

// data2db's METRICS_TRENDVIS_SUPPORTED and OP_TRENDVIS_SUPPORTED. Metric ids and stat columns follow this
// order.
constexpr std::array<std::string_view, 9> kMetrics = {"actv",         "actv_grad",      "exp_avg",
                                                      "exp_avg_sq",   "grad_unreduced", "grad_reduced",
                                                      "param_origin", "param_updated",  "other"};
constexpr std::array<std::string_view, 14> kStats = {
    "norm",        "min", "max",         "zeros", "nans",     "mean",  "entropy",
    "softmax_max", "sr",  "kernel_norm", "std_x", "jacobian", "proxy", "token_similarity"};
constexpr std::size_t kStatCount = kStats.size();
constexpr double kMaxValue = 1e9;  // Data2DBConst.MAX_FLOAT_VALUE (MIN is its negative)
constexpr int kRowsPerInsert = 32;
constexpr double kNull = std::numeric_limits<double>::quiet_NaN();  // trend_data NULL in a TrendRow
constexpr std::int64_t kRowsPerWindow = 1 << 19;  // rows sorted in memory at once (~75 MB; at least one step)

// The fixed tables, byte for byte as data2db's TrendSql creates them (sqlite_master keeps this text).
constexpr const char* kFixedTables = R"sql(CREATE TABLE monitoring_targets (
            target_id INTEGER PRIMARY KEY AUTOINCREMENT,
            target_name TEXT NOT NULL,
            vpp_stage INTEGER NOT NULL,
            micro_step INTEGER NOT NULL DEFAULT 0,
            UNIQUE(target_name, vpp_stage, micro_step)
        );
CREATE TABLE monitoring_metrics (
            metric_id INTEGER PRIMARY KEY AUTOINCREMENT,
            metric_name TEXT UNIQUE NOT NULL
        );
CREATE TABLE monitoring_tags (
            tag_id INTEGER PRIMARY KEY AUTOINCREMENT,
            tag_name TEXT NOT NULL,
            category TEXT NOT NULL,
            metric_id INTEGER NOT NULL,
            UNIQUE(tag_name, category, metric_id),
            FOREIGN KEY (metric_id) REFERENCES monitoring_metrics(metric_id)
        );
CREATE TABLE tag_target_mapping (
            tag_id INTEGER NOT NULL,
            target_id INTEGER NOT NULL,
            PRIMARY KEY (tag_id, target_id),
            FOREIGN KEY (tag_id) REFERENCES monitoring_tags(tag_id),
            FOREIGN KEY (target_id) REFERENCES monitoring_target(target_id)
        );)sql";

// data2db_utils.process_tensor_value: NaN stays NaN (SQLite stores it as NULL), ±inf → ±(1e9+1), the rest is
// clamped to [-1e9, 1e9].
double trend_value(double v) {
    if (std::isnan(v)) return v;
    if (std::isinf(v)) return v > 0 ? kMaxValue + 1 : -kMaxValue - 1;
    return std::clamp(v, -kMaxValue, kMaxValue);
}

// Python's int() on a text cell: a decimal integer with optional blanks around it.
std::optional<std::int64_t> python_int(std::string_view text) {
    constexpr std::string_view blanks = " \t\n\r\f\v";
    const auto first = text.find_first_not_of(blanks);
    if (first == std::string_view::npos) return std::nullopt;
    text = text.substr(first, text.find_last_not_of(blanks) - first + 1);
    return parse_int(text);
}

bool all_digits(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// db_utils.get_tags_from_target: the name split on '.', read from its end. Every non-numeric part is a
// ("part", "module") tag; a number right after a non-numeric part makes a ("part.number", "layer") tag.
std::vector<std::pair<std::string, std::string>> target_tags(std::string_view name) {
    std::vector<std::string_view> parts;
    for (std::size_t start = 0;;) {
        const auto dot = name.find('.', start);
        parts.push_back(name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
        if (dot == std::string_view::npos) break;
        start = dot + 1;
    }
    std::vector<std::pair<std::string, std::string>> tags;
    for (std::size_t i = parts.size(); i-- > 0;) {
        if (!all_digits(parts[i])) tags.emplace_back(parts[i], "module");
        else if (i > 0 && !all_digits(parts[i - 1]))
            tags.emplace_back(std::string(parts[i - 1]) + "." + std::string(parts[i]), "layer");
    }
    return tags;
}

// Which of data2db's stats a stored op layout ("min,max,norm,...,shape,dtype") holds, and in which value
// slot.
struct StatSlots {
    std::array<int, kStatCount> slot{};  // -1: the file had no such column
    std::uint32_t mask = 0;
};

StatSlots stat_slots(std::string_view ops) {
    StatSlots s;
    s.slot.fill(-1);
    int numeric = 0;
    for (std::size_t start = 0; start <= ops.size();) {
        const auto comma = ops.find(',', start);
        const std::string_view op =
            ops.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        if (op != "shape" && op != "dtype") {
            const auto it = std::find(kStats.begin(), kStats.end(), op);
            if (it != kStats.end()) {
                const auto k = static_cast<std::size_t>(it - kStats.begin());
                s.slot[k] = numeric;
                s.mask |= 1u << k;
            }
            ++numeric;
        }
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return s;
}

// A stored tensor of a supported kind in an exported run: one future target, unless its row keys don't parse.
struct SourceTensor {
    std::int64_t id = 0;
    int rank = 0;
    std::size_t metric = 0;  // index in kMetrics
    std::string name;
    std::optional<std::int64_t> vpp;  // nullopt: not an integer, data2db skips its rows
    std::int64_t micro = 0;
    bool has_rows = false;
    std::int64_t target_id = 0;
};

// A deferred read transaction: both passes see the same snapshot while a live ingest keeps committing.
class ReadSnapshot {
public:
    explicit ReadSnapshot(Connection& conn) : conn_(conn) { conn_.exec("BEGIN"); }
    ~ReadSnapshot() { sqlite3_exec(conn_.raw(), "ROLLBACK", nullptr, nullptr, nullptr); }
    ReadSnapshot(const ReadSnapshot&) = delete;
    ReadSnapshot& operator=(const ReadSnapshot&) = delete;

private:
    Connection& conn_;
};

// The new database's file until it is renamed into place; removed if the export fails.
class PendingFile {
public:
    explicit PendingFile(const fs::path& dir) {
        // Not mkstemp: its mode 0600 would stay on the renamed file; 0666 less the umask, like any new file.
        const std::string stem = (dir / ".monitor_data.trend.db.msmon-").string() + std::to_string(::getpid()) + "-";
        for (int attempt = 0; path_.empty(); ++attempt) {
            const std::string candidate = stem + std::to_string(attempt);
            const int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
            if (fd >= 0) {
                ::close(fd);
                path_ = candidate;
            } else if (errno != EEXIST || attempt > 1000) {
                throw std::runtime_error("cannot create a file in '" + dir.string() + "': " + std::strerror(errno));
            }
        }
    }
    ~PendingFile() {
        if (!path_.empty()) ::unlink(path_.c_str());
    }
    PendingFile(const PendingFile&) = delete;
    PendingFile& operator=(const PendingFile&) = delete;
    const std::string& path() const { return path_; }

    // fsync, then rename over `final_path` (and fsync the folder): readers see the old file or the new one.
    void install(const fs::path& final_path) {
        const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0 || ::fsync(fd) != 0) {
            const int err = errno;
            if (fd >= 0) ::close(fd);
            throw std::runtime_error("cannot sync '" + path_ + "': " + std::strerror(err));
        }
        ::close(fd);
        // A journal left by an earlier writer of the old file would be "replayed" into the new one.
        for (const char* suffix : {"-journal", "-wal", "-shm"}) ::unlink((final_path.string() + suffix).c_str());
        if (::rename(path_.c_str(), final_path.c_str()) != 0)
            throw std::runtime_error("cannot replace '" + final_path.string() + "': " + std::strerror(errno));
        path_.clear();
        const int dir = ::open(final_path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir >= 0) {
            ::fsync(dir);
            ::close(dir);
        }
    }

private:
    std::string path_;
};

std::string join_stats(std::uint32_t mask, const char* separator, const char* suffix) {
    std::string out;
    for (std::size_t k = 0; k < kStatCount; ++k) {
        if (!(mask & (1u << k))) continue;
        if (!out.empty()) out += separator;
        out.append(kStats[k]);
        out += suffix;
    }
    return out;
}

// What the source store holds for the export, read in the first pass.
struct SourceScan {
    std::vector<SourceTensor> tensors;  // by rank, then tensor id (the order rows first appeared in)
    std::unordered_map<std::int64_t, StatSlots> layouts;
    std::array<bool, kMetrics.size()> metric_seen{};            // a file of this kind was read
    std::array<std::uint32_t, kMetrics.size()> metric_stats{};  // stats its files had
    std::map<std::int64_t, std::int64_t> micro_counts;          // step → max(micro_step)+1 (--micro_step true)
    std::optional<std::int64_t> min_step;                       // over valid rows (--micro_step false)
    std::int64_t max_step = 0;                                  // data2db starts it at 0
    int max_rank = -1;
    std::map<int, std::map<std::int64_t, std::int64_t>> rank_step_rows;  // rank → step → valid rows
    std::int64_t skipped_rows = 0;
    std::int64_t older_runs = 0;
};

SourceScan scan_source(Connection& src, const TrendDbOptions& options) {
    SourceScan scan;
    Statement layouts(src, "SELECT id, ops FROM layout");
    while (layouts.step()) scan.layouts.emplace(layouts.int64(0), stat_slots(layouts.text(1)));

    // data2db reads one run folder per rank; of several, we take the latest (data2db: the last one listed).
    std::map<int, std::pair<std::int64_t, std::int64_t>> latest;  // rank → (time order, run id)
    Statement runs(src, "SELECT id, rank, time_label FROM run WHERE format = 'msprobe'");
    while (runs.step()) {
        const auto key = std::make_pair(time_label_order(runs.text(2)), runs.int64(0));
        auto [it, inserted] = latest.emplace(static_cast<int>(runs.int64(1)), key);
        if (!inserted) {
            ++scan.older_runs;
            it->second = std::max(it->second, key);
        }
    }

    Statement tensors(src, "SELECT id, kind, vpp_stage, name, micro_step FROM tensor WHERE run_id = ? ORDER BY id");
    for (const auto& [rank, run] : latest) {
        tensors.bind(1, run.second);
        while (tensors.step()) {
            const auto metric = std::find(kMetrics.begin(), kMetrics.end(), tensors.text(1));
            if (metric == kMetrics.end()) continue;
            SourceTensor t;
            t.id = tensors.int64(0);
            t.rank = rank;
            t.metric = static_cast<std::size_t>(metric - kMetrics.begin());
            t.vpp = python_int(tensors.text(2));
            t.name = tensors.text(3);
            t.micro = tensors.opt_int64(4).value_or(0);  // data2db: row.get('micro_step', 0)
            scan.tensors.push_back(std::move(t));
        }
        tensors.reset();
    }

    SampleChunkReader chunks(src);
    std::vector<SampleRow> rows;
    for (auto& t : scan.tensors) {
        chunks.read(t.id, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), rows);
        std::int64_t count = 0;
        for (const SampleRow& row : rows) {
            ++count;
            const auto layout = scan.layouts.find(row.layout_id);
            if (layout != scan.layouts.end()) scan.metric_stats[t.metric] |= layout->second.mask;
            if (!t.vpp) continue;
            const std::int64_t step = row.step;
            ++scan.rank_step_rows[t.rank][step];
            if (options.micro_step) {
                // The entry exists even when micro_step < 0 (count 0), as in data2db's defaultdict.
                std::int64_t& n = scan.micro_counts[step];
                if (t.micro >= n) n = t.micro + 1;
            } else {
                scan.min_step = std::min(scan.min_step.value_or(step), step);
                scan.max_step = std::max(scan.max_step, step);
            }
        }
        t.has_rows = count > 0;
        if (!t.has_rows) continue;
        scan.metric_seen[t.metric] = true;
        scan.max_rank = std::max(scan.max_rank, t.rank);
        if (!t.vpp) scan.skipped_rows += count;
    }
    return scan;
}

// One trend_data row waiting for its multi-row INSERT. NaN: NULL (an absent column or a NaN value).
struct TrendRow {
    std::int64_t rank, step, target_id, metric_id;
    std::array<double, kStatCount> values;
};

class TrendDbWriter {
public:
    TrendDbWriter(Connection& out, std::uint32_t stats) : out_(out), stats_(stats), params_(4 + std::popcount(stats)) {}

    // Writes everything but trend_data's rows; assigns target ids to `scan.tensors`. Returns the metric id of
    // each kMetrics entry (0: not exported).
    std::vector<std::int64_t> write_dimensions(SourceScan& scan, const TrendDbOptions& options,
                                               TrendDbSummary& summary);
    // Appends trend_data rows; INSERT OR IGNORE keeps the first of two rows with the same key, like data2db.
    void add(const TrendRow& row, TrendDbSummary& summary);
    void finish(TrendDbSummary& summary);

private:
    void bind_row(sqlite3_stmt* st, int first, const TrendRow& row);
    void run(sqlite3_stmt* st, TrendDbSummary& summary);

    Connection& out_;
    std::uint32_t stats_;  // bit k: trend_data has the column kStats[k]
    int params_;           // parameters per row
    std::optional<Statement> insert_many_, insert_one_;
    std::vector<TrendRow> pending_;
};

std::vector<std::int64_t> TrendDbWriter::write_dimensions(SourceScan& scan, const TrendDbOptions& options,
                                                          TrendDbSummary& summary) {
    out_.exec(kFixedTables);

    // Targets: metric by metric in data2db's order, each metric's targets in the order its rows first
    // appeared.
    using TargetKey = std::tuple<std::string, std::int64_t, std::int64_t>;  // name, vpp_stage, micro_step
    std::map<TargetKey, std::int64_t> target_ids;
    // Each metric's target ids, in the order first seen.
    std::array<std::vector<std::int64_t>, kMetrics.size()> metric_targets;
    std::vector<std::int64_t> metric_ids(kMetrics.size(), 0);
    Statement target(out_,
                     "INSERT INTO monitoring_targets(target_id, target_name, vpp_stage, micro_step) VALUES(?,?,?,?)");
    for (std::size_t m = 0; m < kMetrics.size(); ++m) {
        std::set<std::int64_t> listed;
        for (auto& t : scan.tensors) {
            if (t.metric != m || !t.vpp || !t.has_rows) continue;
            TargetKey key{t.name, *t.vpp, options.micro_step ? 0 : t.micro};
            auto [it, inserted] = target_ids.emplace(key, static_cast<std::int64_t>(target_ids.size()) + 1);
            if (inserted) {
                target.bind(1, it->second);
                target.bind(2, std::string_view(t.name));
                target.bind(3, std::get<1>(key));
                target.bind(4, std::get<2>(key));
                target.run();
            }
            t.target_id = it->second;
            if (listed.insert(it->second).second) metric_targets[m].push_back(it->second);
        }
    }
    summary.targets = static_cast<std::int64_t>(target_ids.size());
    // data2db inserts each metric's targets with INSERT OR IGNORE, and SQLite advances AUTOINCREMENT's
    // counter for the ignored ones too: its sqlite_sequence counts every attempt (108 for the wg fixture's 18
    // targets).
    std::int64_t attempts = 0;
    for (const auto& ids : metric_targets) attempts += static_cast<std::int64_t>(ids.size());
    Statement sequence(out_, "UPDATE sqlite_sequence SET seq = ? WHERE name = 'monitoring_targets'");
    sequence.bind(1, attempts);
    sequence.run();
    std::vector<const std::string*> target_names(target_ids.size() + 1);
    for (const auto& [key, id] : target_ids) target_names[static_cast<std::size_t>(id)] = &std::get<0>(key);

    Statement metric(out_, "INSERT INTO monitoring_metrics(metric_id, metric_name) VALUES(?,?)");
    for (std::size_t m = 0; m < kMetrics.size(); ++m) {
        if (metric_targets[m].empty()) continue;
        metric_ids[m] = ++summary.metrics;
        metric.bind(1, metric_ids[m]);
        metric.bind(2, kMetrics[m]);
        metric.run();
    }

    // global_stats: the step range, the highest rank, then each metric's stats ("norm,min,...").
    std::string columns = "min_step INTEGER DEFAULT 0, max_step INTEGER DEFAULT 0, max_rank INTEGER DEFAULT 0";
    std::string values = "?,?,?";
    for (std::size_t m = 0; m < kMetrics.size(); ++m) {
        if (!scan.metric_seen[m]) continue;
        columns += ", " + std::string(kMetrics[m]) + " TEXT DEFAULT NULL";
        values += ",?";
    }
    out_.exec(("CREATE TABLE global_stats (\n            " + columns + "\n        )").c_str());
    if (options.micro_step) {
        std::int64_t total = 0;
        for (const auto& [step, n] : scan.micro_counts) total += n;
        summary.min_step = 0;
        summary.max_step = scan.micro_counts.empty() ? 0 : total - 1;
    } else {
        summary.min_step = scan.min_step.value_or(0);
        summary.max_step = scan.max_step;
    }
    Statement global(out_, ("INSERT INTO global_stats VALUES(" + values + ")").c_str());
    global.bind(1, summary.min_step);
    global.bind(2, summary.max_step);
    global.bind(3, scan.max_rank);
    int column = 4;
    for (std::size_t m = 0; m < kMetrics.size(); ++m)
        if (scan.metric_seen[m]) global.bind(column++, std::string_view(join_stats(scan.metric_stats[m], ",", "")));
    global.run();

    // trend_data: one REAL column per stat any file had, in data2db's stat order.
    const std::string stat_columns = join_stats(stats_, ", ", " REAL DEFAULT NULL");
    out_.exec(("CREATE TABLE trend_data (\n            rank INTEGER NOT NULL,\n            step INTEGER NOT NULL,\n"
               "            target_id INTEGER NOT NULL,\n            metric_id INTEGER NOT NULL,\n" +
               (stat_columns.empty() ? std::string() : "            " + stat_columns + ",\n") +
               "            PRIMARY KEY (rank, step, target_id, metric_id),\n"
               "            FOREIGN KEY (target_id) REFERENCES monitoring_targets(target_id),\n"
               "            FOREIGN KEY (metric_id) REFERENCES monitoring_metrics(metric_id)\n"
               "        ) WITHOUT ROWID")
                  .c_str());

    // Tags per metric, linked to that metric's targets.
    Statement tag(out_, "INSERT INTO monitoring_tags(tag_id, tag_name, category, metric_id) VALUES(?,?,?,?)");
    Statement link(out_, "INSERT OR IGNORE INTO tag_target_mapping(tag_id, target_id) VALUES(?,?)");
    for (std::size_t m = 0; m < kMetrics.size(); ++m) {
        std::map<std::pair<std::string, std::string>, std::int64_t> tag_ids;
        for (const std::int64_t target_id : metric_targets[m]) {
            for (auto& t : target_tags(*target_names[static_cast<std::size_t>(target_id)])) {
                auto [it, inserted] = tag_ids.emplace(std::move(t), 0);
                if (inserted) {
                    it->second = ++summary.tags;
                    tag.bind(1, it->second);
                    tag.bind(2, std::string_view(it->first.first));
                    tag.bind(3, std::string_view(it->first.second));
                    tag.bind(4, metric_ids[m]);
                    tag.run();
                }
                link.bind(1, it->second);
                link.bind(2, target_id);
                link.run();
            }
        }
    }

    std::string row = "(?";
    for (int i = 1; i < params_; ++i) row += ",?";
    row += ")";
    std::string many = "INSERT OR IGNORE INTO trend_data VALUES" + row;
    for (int r = 1; r < kRowsPerInsert; ++r) many += "," + row;
    insert_many_.emplace(out_, many.c_str());
    insert_one_.emplace(out_, ("INSERT OR IGNORE INTO trend_data VALUES" + row).c_str());
    return metric_ids;
}

void TrendDbWriter::bind_row(sqlite3_stmt* st, int first, const TrendRow& row) {
    sqlite3_bind_int64(st, first, row.rank);
    sqlite3_bind_int64(st, first + 1, row.step);
    sqlite3_bind_int64(st, first + 2, row.target_id);
    sqlite3_bind_int64(st, first + 3, row.metric_id);
    int i = first + 4;
    for (std::size_t k = 0; k < kStatCount; ++k) {
        if (!(stats_ & (1u << k))) continue;
        if (std::isnan(row.values[k])) sqlite3_bind_null(st, i++);
        else sqlite3_bind_double(st, i++, row.values[k]);  // -0.0 lands as 0.0, as in data2db's file
    }
}

void TrendDbWriter::run(sqlite3_stmt* st, TrendDbSummary& summary) {
    const int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) out_.fail("insert trend_data", rc);
    summary.rows += sqlite3_changes(out_.raw());
}

void TrendDbWriter::add(const TrendRow& row, TrendDbSummary& summary) {
    pending_.push_back(row);
    if (pending_.size() < static_cast<std::size_t>(kRowsPerInsert)) return;
    for (int r = 0; r < kRowsPerInsert; ++r)
        bind_row(insert_many_->raw(), 1 + r * params_, pending_[static_cast<std::size_t>(r)]);
    run(insert_many_->raw(), summary);
    pending_.clear();
}

void TrendDbWriter::finish(TrendDbSummary& summary) {
    for (const auto& row : pending_) {
        bind_row(insert_one_->raw(), 1, row);
        run(insert_one_->raw(), summary);
    }
    pending_.clear();
}

}  // namespace

TrendDbSummary export_trend_db(const std::string& store_path, const std::string& out_dir,
                               const TrendDbOptions& options) {
    Connection src(store_path, Connection::Mode::read_only);
    configure_connection(src, false);
    check_readable_version(src);
    ReadSnapshot snapshot(src);
    SourceScan scan = scan_source(src, options);
    if (scan.max_rank < 0)
        throw std::runtime_error(
            "nothing to export: the store holds no msprobe statistics of a kind data2db takes "
            "(actv, actv_grad, exp_avg, exp_avg_sq, grad_unreduced, grad_reduced, param_origin, "
            "param_updated, other)");

    std::error_code ec;
    fs::create_directories(out_dir, ec);
    if (!fs::is_directory(out_dir))
        throw std::runtime_error("'" + out_dir + "' is not a folder" + (ec ? " (" + ec.message() + ")" : ""));
    const fs::path dir = fs::canonical(out_dir, ec);  // SQLite opens the new file refusing any link on its way
    if (ec) throw std::runtime_error("'" + out_dir + "': " + ec.message());
    const fs::path final_path = dir / kTrendDbFileName;
    PendingFile file(dir);

    TrendDbSummary summary;
    summary.path = final_path.string();
    summary.skipped_rows = scan.skipped_rows;
    summary.older_runs = scan.older_runs;
    std::set<int> ranks;
    std::uint32_t stats = 0;
    for (std::size_t m = 0; m < kMetrics.size(); ++m)
        if (scan.metric_seen[m]) stats |= scan.metric_stats[m];

    // step' = prefix[step] + micro_step: the global micro-batch index (--micro_step true).
    std::unordered_map<std::int64_t, std::int64_t> prefix;
    std::int64_t offset = 0;
    for (const auto& [step, n] : scan.micro_counts) {
        prefix.emplace(step, offset);
        offset += n;
    }
    {
        Connection out(file.path(), Connection::Mode::read_write_create);
        // A private file renamed into place only when complete: no journal, no syncs until then.
        out.exec("PRAGMA journal_mode=OFF");
        out.exec("PRAGMA synchronous=OFF");
        out.exec("PRAGMA locking_mode=EXCLUSIVE");
        out.exec("PRAGMA cache_size=-262144");
        Transaction txn(out);
        TrendDbWriter writer(out, stats);
        const std::vector<std::int64_t> metric_ids = writer.write_dimensions(scan, options, summary);
        // Rows go in in primary-key order (rank, step, target, metric), so the b-tree only ever appends: each
        // rank is read in windows of source steps, and a window is sorted in memory. step' grows with (step,
        // micro_step), so windows never overlap. The sort is stable: of two rows with one key, the first read
        // wins.
        SampleChunkReader chunks(src);
        std::vector<SampleRow> rows;
        std::vector<TrendRow> window;
        std::vector<std::uint32_t> order;
        auto tensor = scan.tensors.begin();
        for (const auto& [rank, step_rows] : scan.rank_step_rows) {
            while (tensor != scan.tensors.end() && tensor->rank < rank) ++tensor;
            const auto rank_end =
                std::find_if(tensor, scan.tensors.end(), [r = rank](const SourceTensor& t) { return t.rank != r; });
            ranks.insert(rank);
            for (auto first = step_rows.begin(); first != step_rows.end();) {
                auto last = first;
                for (std::int64_t n = first->second;
                     std::next(last) != step_rows.end() && n + std::next(last)->second <= kRowsPerWindow;)
                    n += (++last)->second;
                window.clear();
                for (auto t = tensor; t != rank_end; ++t) {
                    if (!t->target_id) continue;
                    TrendRow row{};
                    row.rank = rank;
                    row.target_id = t->target_id;
                    row.metric_id = metric_ids[t->metric];
                    chunks.read(t->id, first->first, last->first, rows);
                    for (const SampleRow& sample : rows) {
                        const std::int64_t step = sample.step;
                        row.step = options.micro_step ? prefix.at(step) + t->micro : step;
                        const StatSlots& slots = scan.layouts.at(sample.layout_id);
                        for (std::size_t k = 0; k < kStatCount; ++k)
                            row.values[k] = slots.slot[k] < 0 ? kNull : trend_value(sample.values[slots.slot[k]]);
                        window.push_back(row);
                    }
                }
                order.resize(window.size());
                std::iota(order.begin(), order.end(), 0u);
                std::stable_sort(order.begin(), order.end(), [&window](std::uint32_t x, std::uint32_t y) {
                    const TrendRow &a = window[x], &b = window[y];
                    return std::tie(a.step, a.target_id, a.metric_id) < std::tie(b.step, b.target_id, b.metric_id);
                });
                for (const std::uint32_t k : order) writer.add(window[k], summary);
                first = std::next(last);
            }
            tensor = rank_end;
        }
        writer.finish(summary);
        txn.commit();
    }
    file.install(final_path);
    summary.ranks = static_cast<std::int64_t>(ranks.size());
    return summary;
}

}  // namespace msmon
