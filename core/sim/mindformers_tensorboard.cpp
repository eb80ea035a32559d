// MindFormers' TensorBoard tags (MFLossMonitor, TrainingStateMonitor, TopkBiasBalanceCallback) per rank and
// step. expert_load goes through tensorboardX's add_scalars: one sub-writer folder per expert,
// rank_<R>/expert_load_<layer>_ep_<i>/, each holding tag expert_load/<layer>.
#include "core/sim/mindformers_tensorboard.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/log/logging.hpp"
#include "core/sim/mindformers_records.hpp"

namespace msmon {

namespace {

constexpr double kFlopsPerNpuStep = 2.99e14;  // as mindformers_records.cpp prints train_throughput_per_npu
constexpr double kTokensPerLayer = 65536;

double noise(std::uint64_t seed, int rank, std::int64_t step, int channel) {
    std::uint64_t x = seed * 0x9e3779b97f4a7c15ull ^ static_cast<std::uint64_t>(rank + 1) * 0xbf58476d1ce4e5b9ull ^
                      static_cast<std::uint64_t>(step) * 0x94d049bb133111ebull ^ static_cast<std::uint64_t>(channel);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    return static_cast<double>(x >> 11) * 0x1.0p-53 - 0.5;  // [-0.5, 0.5)
}

}  // namespace

MfTensorboard::MfTensorboard(std::string dir, const MindFormersPlan& plan, const MindFormersOptions& options,
                             std::uint64_t seed)
    : dir_(std::move(dir)), plan_(plan), options_(options), seed_(seed) {}

TfEventWriter& MfTensorboard::writer(int rank, const std::string& sub) {
    auto& w = writers_[{rank, sub}];
    if (!w) {
        std::string folder = dir_ + "/rank_" + std::to_string(rank) + (sub.empty() ? "" : "/" + sub);
        make_dirs(folder);
        const auto start = static_cast<long long>(wall_);
        w = std::make_unique<TfEventWriter>(folder + "/events.out.tfevents." + std::to_string(start) + ".msmon-sim." +
                                                std::to_string(40000 + 97 * launch_ + rank) + ".0",
                                            wall_);
    }
    return *w;
}

bool MfTensorboard::start_launch(int launch, std::string& error) {
    launch_ = launch;
    writers_.clear();
    wall_ =
        std::floor(std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count()) + launch;
    for (int r = 0; r < plan_.ranks; ++r) {
        TfEventWriter& w = writer(r, "");
        // MindFormers writes every config key on its TEXT page at start-up.
        const std::pair<const char*, std::string> config[] = {
            {"run_mode", "train"},
            {"parallel_config.pipeline_stage", std::to_string(plan_.pipeline_stages)},
            {"runner_config.epochs", std::to_string(plan_.epochs)},
            {"moe_config.expert_num", std::to_string(options_.moe_experts)},
            {"monitor_config", "{'monitor_on': True, 'global_norm_spike_threshold': " +
                                   std::to_string(static_cast<int>(kSpikeThreshold)) +
                                   ".0, 'global_norm_spike_count_threshold': " + std::to_string(kSpikeCountThreshold) +
                                   "}"},
        };
        for (const auto& [k, v] : config)
            if (!w.text(std::string(k) + "/text_summary", 0, v, wall_)) {
                error = w.error();
                return false;
            }
    }
    return true;
}

std::vector<double> MfTensorboard::expert_loads(std::int64_t step, int rank, int layer) const {
    const int n = options_.moe_experts;
    std::vector<double> load(static_cast<std::size_t>(n));
    const bool collapsed =
        options_.collapse_step >= 0 && step >= options_.collapse_step && layer == options_.collapse_layer;
    for (int e = 0; e < n; ++e) {
        const double share = 1.0 / n * (1 + 0.2 * noise(seed_, rank, step, 1000 + layer * 256 + e));
        load[static_cast<std::size_t>(e)] = std::round(kTokensPerLayer * share);
    }
    if (collapsed) {
        // The router sends most tokens to one expert; the rest starve.
        for (int e = 0; e < n; ++e)
            load[static_cast<std::size_t>(e)] = std::round(load[static_cast<std::size_t>(e)] * 0.15);
        load[static_cast<std::size_t>(options_.collapse_expert % n)] = std::round(kTokensPerLayer * 0.7);
    }
    return load;
}

bool MfTensorboard::write_step(const MfPlannedStep& st, int rank, const MfRankStep& rs, std::string& error) {
    TfEventWriter& w = writer(rank, "");
    // When the step is logged, on the clock the log lines use (a relaunch's event file is placed by it).
    const double wall =
        std::max(wall_, std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
    const std::int64_t gbs = plan_.ranks / plan_.pipeline_stages * kMicroBatches;
    const double per_step_s = static_cast<double>(st.per_step_ms) / 1000.0;
    const double samples = static_cast<double>(gbs) / plan_.ranks / per_step_s;
    const bool last_stage = stage_of(rank, plan_) == plan_.pipeline_stages - 1;
    bool ok = true;
    auto put = [&](const std::string& tag, double v) {
        ok = ok && w.scalar(tag, st.step, v, wall);
        if (tag == "loss" || tag == "learning-rate" || tag == "grad-norm" || tag == "iteration-time")
            ok = ok && w.scalar(tag + " vs samples", st.step * gbs, v, wall);
    };
    put("batch-size", static_cast<double>(gbs));
    // Off the last pipeline stage MindFormers' loss is 0 (the log says so and msmon drops it): not written.
    if (last_stage) put("loss", rs.loss);
    put("loss-scale", 1.0);
    if (options_.variant != MfLogVariant::noclip) put("grad-norm", st.global_norm);
    put("iteration-time", static_cast<double>(st.per_step_ms));
    put("throughput", samples);
    put("B-samples-per-day", samples * plan_.ranks * 86400 / 1e9);
    put("model-flops-throughput-per-npu", kFlopsPerNpuStep / static_cast<double>(st.per_step_ms) / 1e9);
    if (options_.variant != MfLogVariant::nolr) put("learning-rate", st.lr);
    put("weight_norm", rs.weight_norm);
    put("throughput_linearity", rs.throughput_linearity);
    for (int layer = 0; layer < options_.moe_layers && ok; ++layer) {
        const std::string layer_name = "layer_" + std::to_string(layer);
        const auto loads = expert_loads(st.step, rank, layer);
        for (int e = 0; e < options_.moe_experts && ok; ++e) {
            TfEventWriter& sub = writer(rank, "expert_load_" + layer_name + "_ep_" + std::to_string(e));
            ok = sub.scalar("expert_load/" + layer_name, st.step, loads[static_cast<std::size_t>(e)], wall);
            if (!ok) error = sub.error();
        }
    }
    if (!ok && error.empty()) error = w.error();
    return ok;
}

std::int64_t MfTensorboard::bytes() const {
    std::int64_t n = 0;
    for (const auto& [_, w] : writers_) n += w->bytes();
    return n;
}

}  // namespace msmon
