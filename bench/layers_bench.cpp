// Layers view benchmark: the view msmon-tui runs, on a store built through the real ingest writer,
// timed as medians. Prints one JSON document on stdout.
//
// Fixed input: 2 ranks x 1,024 activations (64 layers x 16 tensors, forward order) x 10,000 steps x 6 ops
// (min,max,norm,mean,nans,zeros) = 1.23 x 10^8 values; one NaN planted at step 9,000 on rank 1 in layer 40, and
// one incident on it (so the view opens there, as on a real fault).
// Measured (a 200x60 frame, repeats each):
//   first_frame      a new LayersView: collect + draw (the rank of the top incident, tensors x steps)
//   cursor_move      h/l and j/k inside the frame: the key + the redraw (no read)
//   page_down        PgDn: the next page of tensors read and drawn
//   switch_dimension d: rank -> step -> tensor -> rank, each a collect + draw
// Targets: first frame < 50 ms and a cursor move < 16 ms on 1,024 modules x 10,000 steps; switching the fixed
// dimension < 100 ms on a 10^8-value store.
//
// Run: layers_bench [--work /tmp/msmon-layers-bench] [--repeats 7] [--keep] [--reuse]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store/reader.hpp"
#include "store/sqlite_ingest_store.hpp"
#include "tui/key_table.hpp"
#include "tui/screen_buffer.hpp"
#include "tui/views/layers_view.hpp"

namespace fs = std::filesystem;
using namespace msmon;
using namespace msmon::tui;
using Json = nlohmann::ordered_json;

namespace {

constexpr int kRanks = 2, kLayers = 64, kPerLayer = 16, kSteps = 10000, kOps = 6;
constexpr int kTensors = kLayers * kPerLayer;
constexpr int kNanStep = 9000, kNanRank = 1, kNanTensor = 40 * kPerLayer + 7;
constexpr const char* kLayout = "min,max,norm,mean,nans,zeros";
constexpr int kWidth = 200, kHeight = 60;
constexpr double kFirstFrameMs = 50, kCursorMs = 16, kSwitchMs = 100;

std::string tensor_name(int t) {
    static const char* const parts[kPerLayer] = {"input_layernorm.input",
                                                 "input_layernorm.output",
                                                 "self_attention.linear_qkv.input",
                                                 "self_attention.linear_qkv.output",
                                                 "self_attention.core_attention.output",
                                                 "self_attention.linear_proj.input",
                                                 "self_attention.linear_proj.output",
                                                 "self_attention.output",
                                                 "pre_mlp_layernorm.input",
                                                 "pre_mlp_layernorm.output",
                                                 "mlp.linear_fc1.input",
                                                 "mlp.linear_fc1.output",
                                                 "mlp.linear_fc2.input",
                                                 "mlp.linear_fc2.output",
                                                 "mlp.output",
                                                 "output"};
    return "module.decoder.layers." + std::to_string(t / kPerLayer) + "." + parts[t % kPerLayer];
}

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

Json stats(std::vector<double> v, double target) {
    std::sort(v.begin(), v.end());
    const double med = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    return Json{{"median_ms", med},    {"min_ms", v.front()}, {"max_ms", v.back()},
                {"target_ms", target}, {"met", med < target}, {"all_ms", v}};
}

// The store, as a bulk catch-up hands rows to the writer (rank after rank, batches of 100,000 rows).
double build_store(const std::string& db) {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db + suffix);
    const auto t = std::chrono::steady_clock::now();
    SqliteIngestStore store(db);
    RecordBatch batch;
    batch.new_layouts.push_back({1, kLayout});
    std::int64_t file_id = 0;
    const auto flush = [&] {
        std::stable_sort(batch.rows.begin(), batch.rows.end(), [](const SampleRow& a, const SampleRow& b) {
            return a.tensor_id != b.tensor_id ? a.tensor_id < b.tensor_id : a.step < b.step;
        });
        store.commit(batch);
        batch = RecordBatch{};
    };
    for (int r = 0; r < kRanks; ++r) {
        const std::int64_t run_id = r + 1;
        const std::string dir = "/bench/layers/rank_" + std::to_string(r);
        batch.new_runs.push_back({run_id, r, dir, "", "", "msprobe_v2"});
        for (int t = 0; t < kTensors; ++t) {
            TensorInfo info{std::int64_t{r} * kTensors + t + 1, run_id, "actv", "0", tensor_name(t), std::nullopt, 1};
            info.ordinal = t;
            batch.new_tensors.push_back(std::move(info));
        }
        for (int step = 0; step < kSteps; ++step) {
            for (int t = 0; t < kTensors; ++t) {
                SampleRow row;
                row.tensor_id = std::int64_t{r} * kTensors + t + 1;
                row.step = step;
                row.layout_id = 1;
                row.value_count = kOps;
                const auto key =
                    static_cast<std::uint64_t>(row.tensor_id) * 1000003u + static_cast<std::uint64_t>(step);
                const bool nan = r == kNanRank && t >= kNanTensor && step >= kNanStep;
                const double norm = (1.0 + 0.05 * (t % kPerLayer)) * (0.9 + 0.2 * unit(key));
                row.values[0] = -norm / 30;
                row.values[1] = norm / 30;
                row.values[2] = nan ? std::numeric_limits<double>::quiet_NaN() : norm;
                row.values[3] = norm / 1000 * (unit(key + 1) - 0.5);
                row.values[4] = nan ? 1 : 0;
                row.values[5] = std::floor(100 * unit(key + 2));
                batch.rows.push_back(row);
            }
            FileProgress f;
            f.id = ++file_id;
            f.run_id = run_id;
            f.path = dir + "/actv_" + std::to_string(step) + "-" + std::to_string(step) + ".csv";
            f.kind = "actv";
            f.ino = static_cast<std::uint64_t>(file_id);
            f.offset = 64 + 120 * kTensors;
            f.line = 1 + kTensors;
            f.header = share_text(std::string("vpp_stage,name,step,micro_step,") + kLayout);
            batch.files.push_back(std::move(f));
            if (batch.rows.size() >= 100000) flush();
        }
    }
    AnomalyRecord a;
    a.source = "detected";
    a.rule = "NonFinite";
    a.rank = kNanRank;
    a.step = kNanStep;
    a.kind = "actv";
    a.name = tensor_name(kNanTensor);
    a.op = "nans";
    a.value = 1;
    a.message = "nans 0 -> 1";
    a.score = 100;
    batch.anomalies.push_back(a);
    flush();
    return ms_since(t) / 1000;
}

struct Harness {
    Reader& reader;
    SharedSelection shared;
    IncidentIndex incidents;
    LayersView view{shared, incidents, [] {}};
    ScreenBuffer buf{kWidth, kHeight};
    Glyphs glyphs;
    explicit Harness(Reader& r) : reader(r) {}
    // What the app does for a frame: draw, and read again when the view asks (a size it did not read for).
    void frame() {
        buf.clear();
        view.draw(buf, 0, 1, kWidth, kHeight - 3, glyphs);
        if (view.wants_reload()) {
            view.collect(reader);
            buf.clear();
            view.draw(buf, 0, 1, kWidth, kHeight - 3, glyphs);
        }
    }
    void key(int k) {
        Reaction reaction = Reaction::none;
        dispatch(view.keys(), k, reaction);
        if (reaction == Reaction::reload) view.collect(reader);
        frame();
    }
    std::string line(int y) const {
        std::string s;
        for (int x = 0; x < kWidth; ++x) {
            const char32_t c = buf.at(x, y).ch;
            s += c < 0x80 ? static_cast<char>(c) : '?';
        }
        return s.substr(0, s.find_last_not_of(' ') + 1);
    }
};

}  // namespace

int main(int argc, char** argv) {
    std::string work = "/tmp/msmon-layers-bench";
    int repeats = 7;
    bool keep = false, reuse = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--work") && i + 1 < argc) work = argv[++i];
        else if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--keep")) keep = true;
        else if (!std::strcmp(argv[i], "--reuse")) reuse = true;
    }
    fs::create_directories(work);
    const std::string db = work + "/layers.db";
    Json out;
    out["input"] = Json{{"ranks", kRanks},
                        {"tensors", kTensors},
                        {"steps", kSteps},
                        {"ops", kOps},
                        {"values", static_cast<double>(kRanks) * kTensors * kSteps * kOps},
                        {"frame", std::to_string(kWidth) + "x" + std::to_string(kHeight)}};
    if (!(reuse && fs::exists(db))) out["build_s"] = build_store(db);
    auto reader = open_sqlite_reader(db);

    std::vector<double> first, cursor, page, to_step, to_tensor, to_rank;
    std::string title, cursor_line;
    for (int i = 0; i < repeats; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        Harness h(*reader);
        h.view.collect(*reader);
        h.frame();
        first.push_back(ms_since(t0));
        title = h.line(1);
        for (int y = kHeight - 1; y > 0 && cursor_line.empty(); --y)
            if (h.line(y).rfind("step ", 0) == 0) cursor_line = h.line(y);
        for (int k : {'l', 'h', 'j', 'k', 'l', 'h', 'j', 'k'}) {
            const auto t = std::chrono::steady_clock::now();
            h.key(k);
            cursor.push_back(ms_since(t));
        }
        auto t = std::chrono::steady_clock::now();
        h.key(kKeyPageDown);
        page.push_back(ms_since(t));
        h.key(kKeyPageUp);
        for (auto* into : {&to_step, &to_tensor, &to_rank}) {
            t = std::chrono::steady_clock::now();
            h.key('d');
            into->push_back(ms_since(t));
        }
    }
    out["opened_on"] = Json{{"title", title}, {"cursor", cursor_line}};
    out["first_frame"] = stats(first, kFirstFrameMs);
    out["cursor_move"] = stats(cursor, kCursorMs);
    out["page_down"] = stats(page, kFirstFrameMs);
    out["switch_to_one_step"] = stats(to_step, kSwitchMs);
    out["switch_to_one_tensor"] = stats(to_tensor, kSwitchMs);
    out["switch_to_one_rank"] = stats(to_rank, kSwitchMs);
    std::printf("%s\n", out.dump(2).c_str());
    if (!keep && !reuse) {
        reader.reset();
        for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db + suffix);
    }
    return 0;
}
