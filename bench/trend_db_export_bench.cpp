// Trend-db export benchmark: a fixed simulated run (8 ranks, wg/mv/param CSVs, activations with micro_step)
// ingested once, then exported to monitor_data.trend.db `--repeats` times. Prints JSON.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/ingest/ingest_engine.hpp"
#include "core/sim/msprobe_simulator.hpp"
#include "store/sqlite_ingest_store.hpp"
#include "store/trend_db_export.hpp"

namespace fs = std::filesystem;
using namespace msmon;

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
    int repeats = 3, ranks = 8, params = 100, steps = 200;
    std::string work = (fs::temp_directory_path() / "msmon-trend-db-export-bench").string();
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--repeats") repeats = std::stoi(argv[i + 1]);
        else if (a == "--ranks") ranks = std::stoi(argv[i + 1]);
        else if (a == "--params") params = std::stoi(argv[i + 1]);
        else if (a == "--steps") steps = std::stoi(argv[i + 1]);
        else if (a == "--work") work = argv[i + 1];
    }
    fs::remove_all(work);
    fs::create_directories(work);

    SimOptions sim;
    sim.outdir = work + "/job";
    sim.ranks = ranks;
    sim.params = params;
    sim.steps = steps;
    sim.activations = true;
    sim.step_count_per_record = 10;
    sim.seed = 42;
    SimResult written;
    std::string error;
    std::atomic<bool> no_stop{false};
    if (!run_msprobe_simulation(sim, no_stop, written, error)) {
        std::fprintf(stderr, "simulate: %s\n", error.c_str());
        return 1;
    }
    const std::string db = work + "/store.db";
    {
        SqliteIngestStore store(db);
        IngestOptions o;
        o.roots = {sim.outdir};
        IngestEngine engine(store, o);
        if (!engine.run(error)) {
            std::fprintf(stderr, "ingest: %s\n", error.c_str());
            return 1;
        }
    }

    std::vector<double> seconds;
    TrendDbSummary summary;
    for (int r = 0; r < repeats; ++r) {
        const auto t = std::chrono::steady_clock::now();
        summary = export_trend_db(db, work + "/out", TrendDbOptions{});
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count());
    }
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    nlohmann::ordered_json j;
    j["benchmark"] = "trend_db_export";
    j["input"] = {{"csv_rows", written.rows}, {"ranks", ranks}, {"params", params}, {"steps", steps}};
    j["repeats"] = repeats;
    j["rows"] = summary.rows;
    j["targets"] = summary.targets;
    j["seconds_median"] = median(seconds);
    j["seconds_all"] = seconds;
    j["rows_per_second"] = static_cast<double>(summary.rows) / median(seconds);
    j["trend_db_bytes"] = fs::file_size(summary.path);
    j["max_rss_mb"] = static_cast<double>(ru.ru_maxrss) / 1024.0;
    std::printf("%s\n", j.dump(2).c_str());
    fs::remove_all(work);
    return 0;
}
