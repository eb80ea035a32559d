// Bulk ingest benchmark: a fixed simulated run (~600k CSV rows) ingested end to end, against the SQLite limit
// measured in the same run (the same rows, already parsed, committed into the same schema). Prints JSON.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/ingest/ingest_engine.hpp"
#include "core/sim/msprobe_simulator.hpp"
#include "store/sqlite_ingest_store.hpp"

namespace fs = std::filesystem;
using namespace msmon;

namespace {

// Keeps every batch in memory: what the engine parsed, ready to be committed again.
class CapturingStore final : public IngestStore {
public:
    IngestSnapshot load_snapshot() override { return {}; }
    std::optional<FileProgress> load_file(const std::string&) override { return std::nullopt; }
    std::vector<TensorInfo> load_tensors(std::int64_t) override { return {}; }
    std::vector<DetectorStateRecord> load_detector_states(const std::vector<std::int64_t>&) override { return {}; }
    std::vector<StoredSample> load_samples(const std::string&, std::int64_t, std::int64_t) override { return {}; }
    void commit(const RecordBatch& b) override { batches.push_back(b); }
    std::vector<RecordBatch> batches;
};

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

void remove_store(const std::string& db) {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db + suffix);
}

}  // namespace

int main(int argc, char** argv) {
    int repeats = 5, params = 200, steps = 500;
    std::string work = (fs::temp_directory_path() / "msmon-ingest-bench").string();
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        if (a == "--repeats") repeats = std::stoi(argv[i + 1]);
        else if (a == "--params") params = std::stoi(argv[i + 1]);
        else if (a == "--steps") steps = std::stoi(argv[i + 1]);
        else if (a == "--work") work = argv[i + 1];
    }
    fs::remove_all(work);
    fs::create_directories(work);
    const std::string job = work + "/job";

    // Fixed input: 1 rank, `params` tensors, `steps` steps, the 6 wg/mv/param prefixes, ops min,max,norm,mean,
    // nans,zeros (+shape, dtype), ndigits 6, one file per step and prefix — like msprobe's wg fixture, scaled.
    SimOptions sim;
    sim.outdir = job;
    sim.ranks = 1;
    sim.params = params;
    sim.steps = steps;
    sim.seed = 42;
    SimResult written;
    std::string error;
    std::atomic<bool> no_stop{false};
    if (!run_msprobe_simulation(sim, no_stop, written, error)) {
        std::fprintf(stderr, "simulate: %s\n", error.c_str());
        return 1;
    }

    std::vector<double> ingest_s, limit_s, parse_s;
    std::uint64_t rows = 0, values = 0;
    for (int r = 0; r < repeats; ++r) {
        // End to end: discover, read, parse, commit.
        const std::string db = work + "/ingest.db";
        remove_store(db);
        {
            SqliteIngestStore store(db);
            IngestOptions o;
            o.roots = {job};
            IngestEngine engine(store, o);
            const auto t = std::chrono::steady_clock::now();
            if (!engine.run(error)) {
                std::fprintf(stderr, "ingest: %s\n", error.c_str());
                return 1;
            }
            ingest_s.push_back(seconds_since(t));
            rows = engine.counters().rows.load();
            values = engine.counters().values.load();
        }
        // The SQLite limit: the same batches, parsed beforehand, committed into a fresh store of the same schema.
        CapturingStore capture;
        {
            IngestOptions o;
            o.roots = {job};
            IngestEngine engine(capture, o);
            const auto t = std::chrono::steady_clock::now();
            engine.run(error);
            parse_s.push_back(seconds_since(t));
        }
        const std::string db2 = work + "/limit.db";
        remove_store(db2);
        {
            SqliteIngestStore store(db2);
            const auto t = std::chrono::steady_clock::now();
            for (const auto& b : capture.batches) store.commit(b);
            limit_s.push_back(seconds_since(t));
        }
    }
    const double ingest = median(ingest_s), limit = median(limit_s);
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    nlohmann::ordered_json j;
    j["benchmark"] = "bulk_ingest";
    j["input"] = {{"rows", written.rows}, {"bytes", written.bytes}, {"files", written.files},
                  {"params", params},     {"steps", steps},         {"prefixes", 6}};
    j["repeats"] = repeats;
    j["rows"] = rows;
    j["values"] = values;
    j["ingest_seconds_median"] = ingest;
    j["ingest_seconds_all"] = ingest_s;
    j["rows_per_second"] = static_cast<double>(rows) / ingest;
    j["values_per_second"] = static_cast<double>(values) / ingest;
    j["sqlite_limit_seconds_median"] = limit;
    j["sqlite_limit_seconds_all"] = limit_s;
    j["ratio_to_sqlite_limit"] = ingest / limit;
    // The other side of the pipeline: discover, read and parse into batches that are only kept in memory.
    j["parse_only_seconds_median"] = median(parse_s);
    j["store_bytes"] = fs::file_size(work + "/ingest.db") +
                       (fs::exists(work + "/ingest.db-wal") ? fs::file_size(work + "/ingest.db-wal") : 0);
    j["store_bytes_per_value"] =
        static_cast<double>(j["store_bytes"].get<std::uintmax_t>()) / static_cast<double>(values);
    j["max_rss_mb"] = static_cast<double>(ru.ru_maxrss) / 1024.0;
    std::printf("%s\n", j.dump(2).c_str());
    fs::remove_all(work);
    return 0;
}
