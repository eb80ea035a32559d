// Live latency benchmark: 64 ranks each append one step per second (staggered); the time from a line's
// newline reaching the file to the commit that stores it is measured for every write. Prints JSON.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/ingest/ingest_engine.hpp"
#include "store/sqlite_ingest_store.hpp"

namespace fs = std::filesystem;
using namespace msmon;
using Clock = std::chrono::steady_clock;

namespace {

struct PendingWrite {
    std::int64_t end_offset;
    Clock::time_point written;
};

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto idx = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(idx, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
    int ranks = 64, seconds = 20, params = 50, poll_ms = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        if (a == "--ranks") ranks = std::stoi(argv[i + 1]);
        else if (a == "--seconds") seconds = std::stoi(argv[i + 1]);
        else if (a == "--params") params = std::stoi(argv[i + 1]);
        else if (a == "--poll-ms") poll_ms = std::stoi(argv[i + 1]);
    }
    const std::string work =
        (fs::temp_directory_path() / ("msmon-latency-bench-" + std::to_string(::getpid()))).string();
    fs::remove_all(work);
    const std::string root = work + "/job/monitor_output";
    std::vector<std::string> files;
    for (int r = 0; r < ranks; ++r) {
        char name[64];
        std::snprintf(name, sizeof name, "Nov22_13-55-%02d-rank%d-%08x", r % 60, r,
                      0xabc00000u + static_cast<unsigned>(r));
        fs::create_directories(root + "/" + name);
        files.push_back(root + "/" + name + "/grad_reduced_0-99999.csv");
        std::FILE* f = std::fopen(files.back().c_str(), "w");
        std::fputs("vpp_stage,name,step,min,max,norm,mean,nans,zeros,shape,dtype\n", f);
        std::fclose(f);
    }

    std::mutex mu;
    std::map<std::string, std::vector<PendingWrite>> pending;
    std::vector<double> latency_ms;
    SqliteIngestStore store(work + "/store.db");
    IngestOptions options;
    options.roots = {work + "/job"};
    options.follow = true;
    options.poll_ms = poll_ms;
    IngestEngine engine(store, options);
    engine.on_commit = [&](const CommitInfo& info) {
        std::lock_guard lock(mu);
        for (const auto& fp : info.batch->files) {
            auto it = pending.find(fp.path);
            if (it == pending.end()) continue;
            auto& list = it->second;
            auto keep = list.begin();
            for (auto& w : list) {
                if (w.end_offset <= fp.offset)
                    latency_ms.push_back(
                        std::chrono::duration<double, std::milli>(info.committed_at - w.written).count());
                else *keep++ = w;
            }
            list.erase(keep, list.end());
        }
    };
    std::string error;
    std::thread engine_thread([&] { engine.run(error); });
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // let discovery finish

    const auto start = Clock::now();
    std::int64_t writes = 0;
    for (int step = 0; step < seconds; ++step) {
        for (int r = 0; r < ranks; ++r) {
            // Rank r writes its step at step + r/ranks seconds: 64 bursts a second, like unsynchronised ranks.
            std::this_thread::sleep_until(start +
                                          std::chrono::microseconds(static_cast<std::int64_t>(
                                              (static_cast<double>(step) + static_cast<double>(r) / ranks) * 1e6)));
            std::string rows;
            for (int p = 0; p < params; ++p)
                rows += "0,layers." + std::to_string(p) + ".weight," + std::to_string(step) +
                        ",-0.01,0.01,0.5,0.0001,0,0.0,\"[1024, 1024]\",torch.bfloat16\n";
            // Registered before the write: the commit may land before write() even returns.
            const std::string& path = files[static_cast<std::size_t>(r)];
            const auto size = static_cast<std::int64_t>(fs::file_size(path));
            {
                std::lock_guard lock(mu);
                pending[path].push_back({size + static_cast<std::int64_t>(rows.size()), Clock::now()});
            }
            int fd = ::open(path.c_str(), O_WRONLY | O_APPEND);
            [[maybe_unused]] auto n = ::write(fd, rows.data(), rows.size());
            ::close(fd);
            ++writes;
        }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms > 0 ? 3 * poll_ms + 500 : 500));
    engine.stop();
    engine_thread.join();

    std::lock_guard lock(mu);
    nlohmann::ordered_json j;
    j["benchmark"] = "live_latency";
    j["watch"] = engine.watch_mode();
    j["ranks"] = ranks;
    j["seconds"] = seconds;
    j["rows_per_write"] = params;
    j["writes"] = writes;
    j["measured"] = latency_ms.size();
    j["latency_ms_median"] = percentile(latency_ms, 0.5);
    j["latency_ms_p90"] = percentile(latency_ms, 0.9);
    j["latency_ms_p99"] = percentile(latency_ms, 0.99);
    j["latency_ms_max"] = percentile(latency_ms, 1.0);
    std::printf("%s\n", j.dump(2).c_str());
    fs::remove_all(work);
    return latency_ms.size() == static_cast<std::size_t>(writes) ? 0 : 1;
}
