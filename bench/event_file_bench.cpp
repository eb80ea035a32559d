// TensorBoard event-file ingest benchmark: fixed event files (8 ranks × 2,000 steps × 64 tags, one value per
// event as tensorboardX writes them) ingested end to end, and the reading alone (framing + CRC + decoding +
// tag mapping, into a store that keeps nothing). Prints JSON with values/s.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/ingest/ingest_engine.hpp"
#include "core/parse/tfrecord_framing.hpp"
#include "core/sim/tensorboard_writer.hpp"
#include "store/sqlite_ingest_store.hpp"

namespace fs = std::filesystem;
using namespace msmon;

namespace {

class DiscardingStore final : public IngestStore {
public:
    IngestSnapshot load_snapshot() override { return {}; }
    std::optional<FileProgress> load_file(const std::string&) override { return std::nullopt; }
    std::vector<TensorInfo> load_tensors(std::int64_t) override { return {}; }
    std::vector<DetectorStateRecord> load_detector_states(const std::vector<std::int64_t>&) override { return {}; }
    std::vector<StoredSample> load_samples(const std::string&, std::int64_t, std::int64_t) override { return {}; }
    void commit(const RecordBatch&) override {}
};

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
    int repeats = 5, ranks = 8, steps = 2000, tags = 64;
    std::string work = (fs::temp_directory_path() / "msmon-event-file-bench").string();
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        if (a == "--repeats") repeats = std::stoi(argv[i + 1]);
        else if (a == "--steps") steps = std::stoi(argv[i + 1]);
        else if (a == "--tags") tags = std::stoi(argv[i + 1]);
        else if (a == "--work") work = argv[i + 1];
    }
    fs::remove_all(work);
    const std::string job = work + "/job/tensorboard";
    std::uint64_t bytes = 0, written = 0;
    for (int r = 0; r < ranks; ++r) {
        const std::string dir = job + "/rank_" + std::to_string(r);
        fs::create_directories(dir);
        std::string file = frame_record(encode_file_version_event(1.7e9));
        for (int s = 1; s <= steps; ++s)
            for (int t = 0; t < tags; ++t) {
                const std::string tag =
                    t < 16 ? "local_norm/model.layers." + std::to_string(t) + ".w" : "metric/" + std::to_string(t);
                file += frame_record(
                    encode_summary_event(1.7e9 + s, s, {{tag, TfValueSpec::Form::simple, 1.0 / (s + t), "", false}}));
                ++written;
            }
        bytes += file.size();
        std::ofstream(dir + "/events.out.tfevents.1700000000.bench", std::ios::binary) << file;
    }
    std::string error;
    std::vector<double> ingest_s, read_s;
    std::uint64_t values = 0;
    for (int k = 0; k < repeats; ++k) {
        const std::string db = work + "/store.db";
        for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db + suffix);
        {
            SqliteIngestStore store(db);
            IngestOptions o;
            o.roots = {work + "/job"};
            IngestEngine engine(store, o);
            const auto t = std::chrono::steady_clock::now();
            if (!engine.run(error)) {
                std::fprintf(stderr, "ingest: %s\n", error.c_str());
                return 1;
            }
            ingest_s.push_back(seconds_since(t));
            values = engine.counters().values.load();
        }
        DiscardingStore none;
        IngestOptions o;
        o.roots = {work + "/job"};
        IngestEngine engine(none, o);
        const auto t = std::chrono::steady_clock::now();
        engine.run(error);
        read_s.push_back(seconds_since(t));
    }
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    nlohmann::ordered_json j;
    j["benchmark"] = "event_file_ingest";
    j["input"] = {{"ranks", ranks}, {"steps", steps}, {"tags", tags}, {"records", written}, {"bytes", bytes}};
    j["repeats"] = repeats;
    j["values"] = values;
    j["ingest_seconds_median"] = median(ingest_s);
    j["values_per_second"] = static_cast<double>(values) / median(ingest_s);
    j["read_decode_seconds_median"] = median(read_s);
    j["read_decode_values_per_second"] = static_cast<double>(written) / median(read_s);
    j["read_decode_mb_per_second"] = static_cast<double>(bytes) / 1e6 / median(read_s);
    j["max_rss_mb"] = static_cast<double>(ru.ru_maxrss) / 1024.0;
    std::printf("%s\n", j.dump(2).c_str());
    fs::remove_all(work);
    return 0;
}
