// Shipping benchmark against a running ClickHouse (bench/clickhouse_ship_bench.sh starts one on loopback).
// 1. Throughput: N agents, each with its own store holding a simulated 8-rank node's backlog, ship it at once
//    (concurrently, as N nodes would); values/s and CSV rows/s per agent.
// 2. Delay: one agent following a rank folder (inotify, default 1 s shipping interval); a CSV line is
// appended
//    every 250 ms and the time until ClickHouse returns it is measured. Prints one JSON document.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/ingest/periodic_worker.hpp"
#include "core/sim/msprobe_simulator.hpp"
#include "store/clickhouse/clickhouse_sink.hpp"
#include "store/ingest_session.hpp"

namespace fs = std::filesystem;
using namespace msmon;
using Clock = std::chrono::steady_clock;

namespace {

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}

std::int64_t count_rows(const ClickHouseClient& c, const std::string& sql) {
    try {
        return std::atoll(c.query(sql).c_str());
    } catch (const std::exception&) {
        return -1;
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string url;
    int agents = 4, params = 50, steps = 50, lines = 40;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--clickhouse") url = argv[i + 1];
        else if (a == "--agents") agents = std::stoi(argv[i + 1]);
        else if (a == "--params") params = std::stoi(argv[i + 1]);
        else if (a == "--steps") steps = std::stoi(argv[i + 1]);
        else if (a == "--lines") lines = std::stoi(argv[i + 1]);
    }
    std::string error;
    const auto target = parse_clickhouse_url(url, error);
    if (!target) {
        std::fprintf(stderr, "usage: clickhouse_ship_bench --clickhouse clickhouse://HOST:PORT/DB [--agents N]: %s\n",
                     error.c_str());
        return 2;
    }
    const std::string work = (fs::temp_directory_path() / ("msmon-ship-bench-" + std::to_string(::getpid()))).string();
    fs::remove_all(work);
    const std::string run_id = std::to_string(::getpid());

    // 1. Throughput.
    std::vector<std::unique_ptr<ClickHouseShipper>> shippers;
    std::vector<std::uint64_t> csv_rows;
    for (int n = 0; n < agents; ++n) {
        SimOptions sim;
        sim.outdir = work + "/node" + std::to_string(n) + "/job";
        sim.ranks = 8;
        sim.first_rank = 8 * n;
        sim.params = params;
        sim.steps = steps;
        std::atomic<bool> stop{false};
        SimResult result;
        if (!run_msprobe_simulation(sim, stop, result, error)) return 1;
        ShipperOptions so{*target, "bench-throughput-" + run_id, "node" + std::to_string(n)};
        const std::string db = work + "/node" + std::to_string(n) + "/store.db";
        IngestOptions io;
        io.roots = {sim.outdir};
        IngestSession::OpenStatus status;
        auto session = IngestSession::open(db, io, status, error, ClickHouseShipper::destination(so));
        if (!session || !session->engine().run(error)) {
            std::fprintf(stderr, "%s\n", error.c_str());
            return 1;
        }
        csv_rows.push_back(session->engine().counters().rows.load());
        shippers.push_back(std::make_unique<ClickHouseShipper>(db, so));
    }
    std::vector<double> seconds(static_cast<std::size_t>(agents));
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int n = 0; n < agents; ++n)
        threads.emplace_back([&, n] {
            const auto t0 = Clock::now();
            std::string e;
            if (!shippers[static_cast<std::size_t>(n)]->ship_pending(e)) {
                std::fprintf(stderr, "ship failed: %s\n", e.c_str());
                ++failures;
            }
            seconds[static_cast<std::size_t>(n)] = std::chrono::duration<double>(Clock::now() - t0).count();
        });
    for (auto& t : threads) t.join();
    if (failures) return 1;
    nlohmann::ordered_json j;
    j["benchmark"] = "clickhouse_ship";
    j["clickhouse"] = url;
    nlohmann::ordered_json per_agent = nlohmann::ordered_json::array();
    std::vector<double> rates;
    for (int n = 0; n < agents; ++n) {
        const auto k = static_cast<std::size_t>(n);
        const double values = static_cast<double>(shippers[k]->counters().values.load());
        rates.push_back(values / seconds[k]);
        per_agent.push_back({{"values", values},
                             {"csv_rows", csv_rows[k]},
                             {"inserts", shippers[k]->counters().inserts.load()},
                             {"seconds", seconds[k]},
                             {"values_per_second", values / seconds[k]},
                             {"csv_rows_per_second", static_cast<double>(csv_rows[k]) / seconds[k]}});
    }
    j["throughput"] = {{"agents_concurrently", agents},
                       {"per_agent", per_agent},
                       {"median_values_per_second_per_agent", percentile(rates, 0.5)}};

    // 2. Delay from a CSV line's newline to the row being readable in ClickHouse.
    const std::string rank_dir = work + "/delay/job/monitor_output/Nov22_13-55-47-rank0-426b92d1";
    fs::create_directories(rank_dir);
    const std::string csv = rank_dir + "/grad_reduced_0-999999.csv";
    { std::ofstream(csv) << "vpp_stage,name,step,min,max,norm,mean,nans,zeros,shape,dtype\n"; }
    ShipperOptions so{*target, "bench-delay-" + run_id, "node0"};
    const std::string db = work + "/delay/store.db";
    IngestOptions io;
    io.roots = {work + "/delay/job"};
    io.follow = true;
    IngestSession::OpenStatus status;
    auto session = IngestSession::open(db, io, status, error, ClickHouseShipper::destination(so));
    if (!session) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return 1;
    }
    ClickHouseShipper shipper(db, so);
    PeriodicWorker worker(
        [&] {
            std::string e;
            return shipper.ship_pending(e);
        },
        std::chrono::milliseconds(1000), std::chrono::milliseconds(2000));
    session->engine().on_commit = [&](const CommitInfo&) { worker.wake(); };
    std::thread engine([&] {
        std::string e;
        session->engine().run(e);
    });
    const ClickHouseClient client(*target);
    std::vector<double> delays;
    for (int step = 0; step < lines; ++step) {
        {
            std::ofstream out(csv, std::ios::app);
            out << "0,embed.weight," << step << ",-0.1,0.2," << (1.0 + step)
                << ",0.001,0,0.0,\"[16, 8]\",torch.float32\n";
        }
        const auto written = Clock::now();
        const std::string sql = "SELECT count() FROM " + target->database + ".points WHERE job = '" + so.job +
                                "' AND step = " + std::to_string(step) + " AND op = 'norm'";
        while (count_rows(client, sql) < 1) {
            if (Clock::now() - written > std::chrono::seconds(30)) {
                std::fprintf(stderr, "line %d never reached ClickHouse\n", step);
                return 1;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        delays.push_back(std::chrono::duration<double, std::milli>(Clock::now() - written).count());
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    session->engine().stop();
    engine.join();
    worker.stop();
    j["delay"] = {{"lines", lines},
                  {"ship_interval_ms", 1000},
                  {"csv_line_to_clickhouse_ms_median", percentile(delays, 0.5)},
                  {"csv_line_to_clickhouse_ms_p90", percentile(delays, 0.9)},
                  {"csv_line_to_clickhouse_ms_max", percentile(delays, 1.0)}};
    std::printf("%s\n", j.dump(2).c_str());
    fs::remove_all(work);
    return 0;
}
