// Query-at-scale benchmark: stores of 10^6, 10^7, 10^8 values built through the real ingest writer
// (SqliteIngestStore::commit), then the reads the views make, timed as medians. Prints one JSON document on stdout
// and a growth table (10^6 → 10^7 → 10^8) on stderr.
//
// Fixed inputs, two store shapes per size N (ops min,max,norm,mean,nans,zeros: one value = one op of one row):
//   wide: 4,096 ranks × 25 grad_reduced params × round(N / 614,400) steps — the Overview's shape (10^8: 163 steps)
//   deep: 8 ranks × round(N / 480,000) params × 10,000 steps — the Chart's shape (10^8: 208 params)
// Both get 100,000 anomalies. Rows go in as a bulk catch-up hands them to the writer: rank after rank, batches of
// 8,192 rows doubling to 100,000, rows of a batch sorted by (tensor, step), one file offset per (rank, step) file.
// Measured, per store: build seconds; series = Reader::points of one (rank, kind, name, op) over 10,000 steps
// (deep); chart_collect = Reader::rank_series(kind, op, exact name, all steps) as the Chart view asks (deep);
// overview = Reader::rank_series(kind, op, every param, last 200 steps) over 4,096 ranks (wide);
// anomalies = Reader::anomalies({}) and the Anomalies view's first page (collect + draw: 100k anomalies are over
// the incidents' limit, so the ranked table the store pages), the incidents had the limit allowed all 100k (read,
// grouped, drawn) and their refresh when no anomaly came in (the count alone is read); cold start =
// open_sqlite_reader + App::collect + App::compose into a 200×60 ScreenBuffer (what `msmon-tui --snapshot`
// does, without a terminal; the OS page cache is warm, the process is not); VmHWM/VmRSS after each phase (the
// peak is reset before each phase through /proc/self/clear_refs); store bytes per value.
//
// Run: query_scale_bench [--max-values 1e7] [--sizes 1e6,1e7,3e7] [--repeats 7] [--build-repeats 3]
//      [--work /tmp/msmon-query-scale-bench] [--keep] [--reuse]
// --max-values picks the sizes 1e6, 1e7, 1e8 up to it (default 1e7: a quick run; 1e8 needs ~2×1.4 GB in --work
// and a long build). Sizes above 1e7 are built once (a build is the expensive part), smaller ones --build-repeats
// times. --keep leaves the stores in --work; --reuse measures stores left there by --keep instead of building.
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store/reader.hpp"
#include "store/sqlite_ingest_store.hpp"
#include "tui/app.hpp"
#include "tui/screen_buffer.hpp"
#include "tui/views/anomalies_view.hpp"

namespace fs = std::filesystem;
using namespace msmon;
using Json = nlohmann::ordered_json;

namespace {

constexpr int kOps = 6;
constexpr const char* kLayout = "min,max,norm,mean,nans,zeros";
constexpr const char* kKind = "grad_reduced";
constexpr int kAnomalies = 100000;
constexpr int kFrameWidth = 200, kFrameHeight = 60;
// Targets from the issue: milliseconds, and megabytes of resident memory.
constexpr double kSeriesTargetMs = 5, kOverviewTargetMs = 50, kAnomaliesTargetMs = 20, kColdStartTargetMs = 300,
                 kMemoryTargetMb = 200;

struct Shape {
    std::string name;  // wide | deep
    int ranks = 0, params = 0, steps = 0;
    std::int64_t values() const { return std::int64_t{ranks} * params * steps * kOps; }
};

Shape wide_shape(double n) {
    return {"wide", 4096, 25, std::max(1, static_cast<int>(std::lround(n / (4096.0 * 25 * kOps))))};
}
Shape deep_shape(double n) {
    return {"deep", 8, std::max(1, static_cast<int>(std::lround(n / (8.0 * 10000 * kOps)))), 10000};
}

std::string param_name(int p) {
    return "module.decoder.layers." + std::to_string(p) + ".mlp.linear_fc1.weight";
}

// Fixed pseudo-random numbers: the same store every run.
std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
double unit(std::uint64_t x) {
    return static_cast<double>(mix(x) >> 11) * 0x1.0p-53;
}

double ms_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

Json stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const double med = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    return Json{{"median", med}, {"min", v.front()}, {"max", v.back()}, {"all", v}};
}

// VmHWM / VmRSS in MB; reset_peak() starts a new peak (Linux: writing 5 to clear_refs resets VmHWM).
double status_mb(const char* key) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(key, 0) == 0) return std::atof(line.c_str() + std::strlen(key)) / 1024.0;
    return -1;
}
// malloc_trim first: the heap the build phase freed would otherwise stay resident and count against the reads.
void reset_peak() {
    malloc_trim(0);
    std::ofstream("/proc/self/clear_refs") << "5";
}
Json memory() {
    return Json{{"vm_hwm_mb", status_mb("VmHWM:")}, {"vm_rss_mb", status_mb("VmRSS:")}};
}

void remove_store(const std::string& db) {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db + suffix);
}

std::uintmax_t store_bytes(const std::string& db) {
    std::uintmax_t n = 0;
    for (const char* suffix : {"", "-wal"})
        if (fs::exists(db + suffix)) n += fs::file_size(db + suffix);
    return n;
}

AnomalyRecord make_anomaly(const Shape& s, int i) {
    static const char* const rules[] = {"AnomalyTurbulence", "AnomalyNan",        "CrossRankOutlier",
                                        "GlobalNormSpike",   "EmbeddingNormHigh", "StalledRank"};
    const auto u = static_cast<std::uint64_t>(i);
    AnomalyRecord a;
    a.source = i % 3 ? "detected" : "msprobe";
    a.rule = rules[mix(u) % 6];
    a.rank = static_cast<int>(mix(u + 1) % static_cast<std::uint64_t>(s.ranks));
    a.step = static_cast<std::int64_t>(mix(u + 2) % static_cast<std::uint64_t>(s.steps));
    a.kind = kKind;
    a.name = param_name(static_cast<int>(mix(u + 3) % static_cast<std::uint64_t>(s.params)));
    a.op = i % 4 ? "norm" : "mean";
    a.value = 100 * unit(u + 4);
    a.reference = 1.0;
    a.tag_name = "0:" + a.name + "/rank" + std::to_string(a.rank) + "/post_grad";
    a.message = "Rule " + a.rule + " reports anomaly signal";
    a.key = a.tag_name + "_step_" + std::to_string(a.step) + "_call_" + std::to_string(i);
    a.call_id = i;
    a.score = 100 * unit(u + 5);
    return a;
}

// Builds one store through SqliteIngestStore::commit, in the order a bulk catch-up hands rows to the writer.
double build_store(const std::string& db, const Shape& s) {
    remove_store(db);
    const auto t = std::chrono::steady_clock::now();
    {
        SqliteIngestStore store(db);
        RecordBatch batch;
        batch.new_layouts.push_back({1, kLayout});
        std::size_t limit = 8192;
        std::int64_t file_id = 0;
        auto flush = [&] {
            std::stable_sort(batch.rows.begin(), batch.rows.end(), [](const SampleRow& a, const SampleRow& b) {
                return a.tensor_id != b.tensor_id ? a.tensor_id < b.tensor_id : a.step < b.step;
            });
            store.commit(batch);
            batch = RecordBatch{};
            limit = std::min<std::size_t>(limit * 2, 100000);
        };
        for (int r = 0; r < s.ranks; ++r) {
            const std::int64_t run_id = r + 1;
            const std::string dir = "/bench/" + s.name + "/rank_" + std::to_string(r);
            batch.new_runs.push_back({run_id, r, dir, "", "", "msprobe_v2"});
            for (int p = 0; p < s.params; ++p)
                batch.new_tensors.push_back(
                    {std::int64_t{r} * s.params + p + 1, run_id, kKind, "0", param_name(p), std::nullopt, 1});
            for (int step = 0; step < s.steps; ++step) {
                for (int p = 0; p < s.params; ++p) {
                    SampleRow row;
                    row.tensor_id = std::int64_t{r} * s.params + p + 1;
                    row.step = step;
                    row.layout_id = 1;
                    row.value_count = kOps;
                    const std::uint64_t key =
                        static_cast<std::uint64_t>(row.tensor_id) * 1000003u + static_cast<std::uint64_t>(step);
                    const double norm =
                        (1.0 + 0.01 * p) * (1.0 + 0.1 * std::sin(step / 50.0)) * (0.9 + 0.2 * unit(key));
                    row.values[0] = -norm / 30;
                    row.values[1] = norm / 30;
                    row.values[2] = key % 1000003u == 17 ? std::numeric_limits<double>::quiet_NaN() : norm;
                    row.values[3] = norm / 1000 * (unit(key + 1) - 0.5);
                    row.values[4] = 0;
                    row.values[5] = std::floor(100 * unit(key + 2));
                    batch.rows.push_back(row);
                }
                FileProgress f;
                f.id = ++file_id;
                f.run_id = run_id;
                f.path = dir + "/" + kKind + "_" + std::to_string(step) + ".csv";
                f.kind = kKind;
                f.ino = static_cast<std::uint64_t>(file_id);
                f.offset = 64 + 120 * s.params;
                f.line = 1 + s.params;
                f.header = share_text(std::string("vpp_stage,name,step,") + kLayout);
                batch.files.push_back(std::move(f));
                if (batch.rows.size() >= limit) flush();
            }
        }
        for (int i = 0; i < kAnomalies; ++i) batch.anomalies.push_back(make_anomaly(s, i));
        flush();
    }  // closing the last connection checkpoints the WAL into the database file
    return ms_since(t) / 1000;
}

// Runs `query` `repeats` times: the stats of its milliseconds; `items` is what the last run returned.
Json time_query(int repeats, const std::function<std::size_t()>& query, std::size_t& items) {
    std::vector<double> ms;
    for (int i = 0; i < repeats; ++i) {
        const auto t = std::chrono::steady_clock::now();
        items = query();
        ms.push_back(ms_since(t));
    }
    return stats(ms);
}

Json measure(const std::string& db, const Shape& s, int repeats) {
    Json out;
    auto reader = open_sqlite_reader(db);
    std::size_t items = 0;
    auto phase = [&](const char* name, double target, const std::function<std::size_t()>& query) {
        reset_peak();
        Json j = time_query(repeats, query, items);
        j["items"] = items;
        if (target > 0) {
            j["target_ms"] = target;
            j["met"] = j["median"].get<double>() < target;
        }
        j["memory"] = memory();
        out[name] = std::move(j);
    };
    const int mid_rank = s.ranks / 2;
    const std::string mid_name = param_name(s.params / 2);
    if (s.name == "deep") {
        phase("series", kSeriesTargetMs, [&] {
            PointFilter f;
            f.rank = mid_rank;
            f.kind = kKind;
            f.name_regex = "^" + mid_name + "$";
            f.op = "norm";
            std::size_t n = 0;
            reader->points(f, [&](const Point&) { ++n; });
            return n;
        });
        phase("chart_collect", 0, [&] {
            std::size_t n = 0;
            for (const auto& rs : reader->rank_series({kKind, "norm", "^" + mid_name + "$", 0, {}}))
                n += rs.points.size();
            return n;
        });
    } else {
        phase("overview", kOverviewTargetMs, [&] {
            std::size_t n = 0;
            for (const auto& rs : reader->rank_series({kKind, "norm", std::nullopt, 200, {}})) n += rs.points.size();
            return n;
        });
    }
    phase("anomalies", kAnomaliesTargetMs, [&] { return reader->anomalies({}).size(); });
    auto first_page = [&](IncidentIndex& incidents) {
        tui::SharedSelection shared;
        tui::AnomaliesView view(shared, incidents, [] {});
        view.collect(*reader);
        tui::ScreenBuffer buf(kFrameWidth, kFrameHeight);
        view.draw(buf, 0, 1, kFrameWidth, kFrameHeight - 3, tui::Glyphs{});
        return view.rows_in_hand();
    };
    // As the TUI opens: 100k anomalies are over the incidents' limit, so the tab shows the ranked table the store
    // pages (and says why).
    phase("anomalies_first_page", 0, [&] {
        IncidentIndex incidents;
        return first_page(incidents);
    });
    // Had the limit allowed them: every anomaly read and grouped into incidents (the first frame, and each time
    // the anomaly count changes), then a refresh with no new anomaly (the count alone is read).
    phase("incidents_first_page_unlimited", 0, [&] {
        IncidentIndex incidents(kAnomalies);
        return first_page(incidents);
    });
    IncidentIndex grouped(kAnomalies);
    grouped.update(*reader);
    phase("incidents_refresh_unchanged", 0, [&] { return first_page(grouped); });
    reader.reset();
    phase("cold_start", kColdStartTargetMs, [&] {
        tui::App app(open_sqlite_reader(db));
        app.collect();
        tui::ScreenBuffer buf(kFrameWidth, kFrameHeight);
        app.compose(buf, tui::Glyphs{});
        return static_cast<std::size_t>(buf.to_text().size());
    });
    return out;
}

std::vector<double> parse_sizes(const std::string& list) {
    std::vector<double> out;
    for (std::size_t start = 0; start < list.size();) {
        auto comma = list.find(',', start);
        out.push_back(std::stod(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

std::string size_label(double n) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0e", n);
    return buf;
}

}  // namespace

int main(int argc, char** argv) {
    double max_values = 1e7;
    std::vector<double> sizes;
    int repeats = 7, build_repeats = 3;
    bool keep = false, reuse = false;
    std::string work = (fs::temp_directory_path() / "msmon-query-scale-bench").string();
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--keep") keep = true;
        else if (a == "--reuse") reuse = keep = true;
        else if (a == "--max-values" && has_value) max_values = std::stod(argv[++i]);
        else if (a == "--sizes" && has_value) sizes = parse_sizes(argv[++i]);
        else if (a == "--repeats" && has_value) repeats = std::stoi(argv[++i]);
        else if (a == "--build-repeats" && has_value) build_repeats = std::stoi(argv[++i]);
        else if (a == "--work" && has_value) work = argv[++i];
        else {
            std::fprintf(stderr,
                         "usage: query_scale_bench [--max-values N] [--sizes N,N,...] [--repeats R] "
                         "[--build-repeats R] [--work DIR] [--keep] [--reuse]\n");
            return 2;
        }
    }
    if (sizes.empty())
        for (double n : {1e6, 1e7, 1e8})
            if (n <= max_values * 1.0001) sizes.push_back(n);
    fs::create_directories(work);

    Json doc;
    doc["benchmark"] = "query_scale";
    doc["layout"] = kLayout;
    doc["anomalies_per_store"] = kAnomalies;
    doc["frame"] = std::to_string(kFrameWidth) + "x" + std::to_string(kFrameHeight);
    doc["repeats"] = repeats;
    doc["targets_ms"] = {{"series", kSeriesTargetMs},
                         {"overview", kOverviewTargetMs},
                         {"anomalies", kAnomaliesTargetMs},
                         {"cold_start", kColdStartTargetMs}};
    doc["target_memory_mb"] = kMemoryTargetMb;
    Json stores = Json::array();
    for (double n : sizes) {
        for (const Shape& s : {wide_shape(n), deep_shape(n)}) {
            const std::string db = work + "/" + s.name + "-" + size_label(n) + ".db";
            Json j;
            j["size"] = size_label(n);
            j["shape"] = {
                {"name", s.name}, {"ranks", s.ranks}, {"params", s.params}, {"steps", s.steps}, {"ops", kOps}};
            j["values"] = s.values();
            if (!(reuse && fs::exists(db))) {
                reset_peak();
                std::vector<double> secs;
                const int builds = n > 1.0001e7 ? 1 : std::max(1, build_repeats);
                for (int b = 0; b < builds; ++b) {
                    secs.push_back(build_store(db, s));
                    std::fprintf(stderr, "built %s %s: %.1f s\n", s.name.c_str(), size_label(n).c_str(), secs.back());
                }
                j["build_seconds"] = stats(secs);
                j["build_values_per_second"] =
                    static_cast<double>(s.values()) / j["build_seconds"]["median"].get<double>();
                j["build_memory"] = memory();
            }
            j["store_bytes"] = store_bytes(db);
            j["store_bytes_per_value"] = static_cast<double>(store_bytes(db)) / static_cast<double>(s.values());
            j["queries"] = measure(db, s, repeats);
            if (!keep) remove_store(db);
            std::fprintf(stderr, "measured %s %s\n", s.name.c_str(), size_label(n).c_str());
            stores.push_back(std::move(j));
        }
    }
    doc["stores"] = stores;

    // Growth: each metric's median per size, and its ratio to the previous size.
    struct Metric {
        const char* label;
        const char* shape;
        std::function<double(const Json&)> get;
    };
    auto query = [](const char* q) {
        return
            [q](const Json& st) { return st["queries"].contains(q) ? st["queries"][q]["median"].get<double>() : NAN; };
    };
    const Metric metrics[] = {
        {"build wide (s)", "wide",
         [](const Json& st) {
             return st.contains("build_seconds") ? st["build_seconds"]["median"].get<double>() : NAN;
         }},
        {"build deep (s)", "deep",
         [](const Json& st) {
             return st.contains("build_seconds") ? st["build_seconds"]["median"].get<double>() : NAN;
         }},
        {"series 10k steps (ms)", "deep", query("series")},
        {"chart collect (ms)", "deep", query("chart_collect")},
        {"overview 4096 ranks (ms)", "wide", query("overview")},
        {"anomalies wide (ms)", "wide", query("anomalies")},
        {"anomalies first page (ms)", "wide", query("anomalies_first_page")},
        {"incidents, all grouped (ms)", "wide", query("incidents_first_page_unlimited")},
        {"incidents, no change (ms)", "wide", query("incidents_refresh_unchanged")},
        {"cold start wide (ms)", "wide", query("cold_start")},
        {"cold start deep (ms)", "deep", query("cold_start")},
        {"bytes/value wide", "wide", [](const Json& st) { return st["store_bytes_per_value"].get<double>(); }},
    };
    Json growth = Json::array();
    std::fprintf(stderr, "\n%-28s", "growth (median)");
    for (double n : sizes) std::fprintf(stderr, "%20s", size_label(n).c_str());
    std::fprintf(stderr, "\n");
    for (const auto& m : metrics) {
        Json row{{"metric", m.label}, {"values", Json::array()}};
        std::fprintf(stderr, "%-28s", m.label);
        double prev = NAN;
        for (const auto& st : stores) {
            if (st["shape"]["name"] != m.shape) continue;
            const double v = m.get(st);
            row["values"].push_back({{"size", st["size"]},
                                     {"value", v},
                                     {"ratio_to_previous", std::isnan(prev) ? Json() : Json(v / prev)}});
            char cell[32];
            if (std::isnan(prev)) std::snprintf(cell, sizeof cell, "%.3g", v);
            else std::snprintf(cell, sizeof cell, "%.3g (x%.1f)", v, v / prev);
            std::fprintf(stderr, "%20s", cell);
            prev = v;
        }
        std::fprintf(stderr, "\n");
        growth.push_back(std::move(row));
    }
    doc["growth"] = growth;
    std::printf("%s\n", doc.dump(2).c_str());
    std::error_code ignored;
    if (!keep) fs::remove(work, ignored);  // only if empty: --work may hold other things
    return 0;
}
