// The MindFormers side of `msmon simulate`: every step is planned first (faults, data skip, restarts,
// checkpoints), then each rank's records are rendered in the logger's exact text and written as Python's
// logging writes them: one write per record, RotatingFileHandler rollover by rename, rank 0's health JSON
// rewritten whole.
#include "core/sim/mindformers_simulator.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

#include "core/log/logging.hpp"
#include "core/sim/keyed_noise.hpp"
#include "core/sim/mindformers_records.hpp"
#include "core/sim/mindformers_tensorboard.hpp"
#include "core/sim/rotating_log.hpp"

namespace msmon {

namespace {

// The simulated job's yaml: monitor_config, CheckpointMonitor, logger, as MindFormers reads them (the data-skip
// threshold, the health monitor, the log folders). The
// values its records print as well are in mindformers_records.hpp.
constexpr double kStopSpike = 100;  // gradient factor of the spikes a stop@ fault implies
constexpr int kBackupCount = 5;     // RotatingFileHandler backupCount
constexpr int kEpochs = 2;
constexpr double kLrMax = 1e-5, kLrMin = 1e-6;

// ---- deterministic noise: a hash of (seed, rank, step, channel), independent of the order of writing ----

double uniform01(std::uint64_t seed, int rank, std::int64_t step, int channel) {
    std::uint64_t h = mix64(seed);
    h = mix64(h ^ static_cast<std::uint64_t>(rank + 1));
    h = mix64(h ^ static_cast<std::uint64_t>(step));
    h = mix64(h ^ static_cast<std::uint64_t>(channel));
    return (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53;
}

// A standard normal sample, clamped to ±3 so healthy values never cross the thresholds by chance.
double gauss(std::uint64_t seed, int rank, std::int64_t step, int channel) {
    const double u1 = uniform01(seed, rank, step, 2 * channel), u2 = uniform01(seed, rank, step, 2 * channel + 1);
    const double g = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    return std::clamp(g, -3.0, 3.0);
}

enum Channel {
    ch_global_norm = 1,
    ch_loss,
    ch_step_time,
    ch_warmup,
    ch_rank_loss,
    ch_lbl,
    ch_adam,
    ch_weight,
    ch_linearity,
    ch_save_time,
    ch_param = 100
};

float lr_at(std::int64_t opt_step, std::int64_t warmup, std::int64_t total) {
    if (opt_step < warmup)
        return static_cast<float>(kLrMax * static_cast<double>(opt_step) / static_cast<double>(warmup));
    const double progress = std::min(
        1.0, static_cast<double>(opt_step - warmup) / static_cast<double>(std::max<std::int64_t>(1, total - warmup)));
    return static_cast<float>(kLrMin + 0.5 * (kLrMax - kLrMin) * (1 + std::cos(3.141592653589793 * progress)));
}

// ---- the toy model: a two-layer llama split over the pipeline stages ----

std::vector<MfParam> layer_params(int layer) {
    const std::string p = "model.layers." + std::to_string(layer) + ".";
    return {{p + "attention_norm.weight", 4096, 0.06, true},     {p + "attention.wq.weight", 16777216, 1.0, true},
            {p + "attention.wk.weight", 4194304, 0.55, false},   {p + "attention.wv.weight", 4194304, 0.7, false},
            {p + "attention.wo.weight", 16777216, 1.6, false},   {p + "ffn_norm.weight", 4096, 0.05, false},
            {p + "feed_forward.w1.weight", 58720256, 2.4, true}, {p + "feed_forward.w2.weight", 58720256, 2.0, false},
            {p + "feed_forward.w3.weight", 58720256, 2.3, false}};
}

// Stage 0 holds the embedding (first in norm_size, as get_embedding_info expects); the last stage the head.
std::vector<MfParam> stage_params(int stage, int stages) {
    std::vector<MfParam> out;
    if (stage == 0) {
        out.push_back({"model.tok_embeddings.embedding_weight", 131072000, 12.0, false});
        for (auto& p : layer_params(0)) out.push_back(p);
    }
    if (stage == stages - 1) {
        for (auto& p : layer_params(1)) out.push_back(p);
        out.push_back({"model.norm_out.weight", 4096, 0.08, false});
        out.push_back({"lm_head.weight", 131072000, 9.0, false});
    }
    return out;
}

MfRankStep rank_step(const MfPlannedStep& st, int rank, const std::vector<MfParam>& params, bool last_stage,
                     std::uint64_t seed) {
    MfRankStep r;
    const double g = static_cast<double>(st.step);
    const double decay = std::sqrt(0.83 + 0.62 * std::exp(-g / 100.0));
    const bool nan_here = st.nan_on(rank);
    double total = 0;
    for (std::size_t i = 0; i < params.size(); ++i) {
        const double norm = params[i].grad_norm * decay *
                            (1 + 0.03 * gauss(seed, rank, st.step, ch_param + static_cast<int>(i))) * st.spike;
        const float ss = nan_here ? std::nanf("") : static_cast<float>(norm * norm);
        r.sum_squares.push_back(ss);
        total += ss;
    }
    r.device_local_norm = static_cast<float>(std::sqrt(total));
    if (!params.empty() && params[0].size == 131072000 && params[0].name.find("embedding") != std::string::npos)
        r.embedding = r.sum_squares[0];
    if (last_stage) {
        const double loss = st.loss + 0.02 * gauss(seed, rank, st.step, ch_rank_loss);
        r.micro_loss[0] = static_cast<float>(loss * 1.0017);
        r.micro_loss[1] = static_cast<float>(loss * 0.9983);
        if (nan_here) r.micro_loss[0] = r.micro_loss[1] = std::nanf("");
        r.device_accum_loss = r.micro_loss[0] + r.micro_loss[1];
        r.loss = r.device_accum_loss / kMicroBatches;
        r.load_balancing_loss = 0.012 + 0.002 * gauss(seed, rank, st.step, ch_lbl);
    }
    const double state_decay = std::exp(-static_cast<double>(st.step) / 300.0);
    r.adam_m_norm = static_cast<float>(0.0021 * (0.6 + state_decay) * (1 + 0.02 * gauss(seed, rank, st.step, ch_adam)));
    r.adam_v_norm =
        static_cast<float>(3.2e-7 * (0.6 + state_decay) * (1 + 0.02 * gauss(seed, rank, st.step, ch_adam + 1)));
    r.weight_norm = static_cast<float>(1203.88 + 0.004 * static_cast<double>(st.step) +
                                       0.001 * gauss(seed, rank, st.step, ch_weight));
    r.throughput_linearity = 0.993 + 0.002 * gauss(seed, rank, st.step, ch_linearity);
    r.save_seconds = 2.0 + 0.05 * uniform01(seed, rank, st.step, ch_save_time);
    return r;
}

// ---- rank 0's health JSON ----

// Rank 0's CheckpointMonitor: read the whole array, append, json.dump(indent=4) with truncate-then-write (not
// atomic, no trailing newline), here in two writes with a pause so a reader can catch a cut file.
bool append_health_entry(const std::string& path, int is_health, const std::string& ckpt_name, std::string& error) {
    nlohmann::ordered_json doc = nlohmann::ordered_json::array();
    {
        std::string text;
        const int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (in >= 0) {
            char buf[8192];
            for (ssize_t n; (n = ::read(in, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
            ::close(in);
        }
        auto old = nlohmann::ordered_json::parse(text, nullptr, false);
        if (!old.is_discarded() && old.is_array()) doc = std::move(old);
    }
    nlohmann::ordered_json entry = nlohmann::ordered_json::object();
    entry["is_health"] = is_health;
    entry["ckpt_name"] = ckpt_name;
    doc.push_back(std::move(entry));
    const std::string text = doc.dump(4, ' ', true);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
    if (fd < 0) {
        error = "cannot write " + path;
        return false;
    }
    const std::size_t half = text.size() / 2;
    bool ok = write_all(fd, text.data(), half);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ok = ok && write_all(fd, text.data() + half, text.size() - half);
    ::close(fd);
    if (!ok) error = "short write to " + path;
    return ok;
}

// One rank's two sinks.
struct RankFiles {
    RotatingLog info;
    RotatingLog worker;  // stdout of the rank's process: never rotated
};

}  // namespace

std::optional<MfLogVariant> parse_mf_log_variant(std::string_view name) {
    static const std::map<std::string_view, MfLogVariant> names = {
        {"standard", MfLogVariant::standard}, {"nonsink", MfLogVariant::nonsink}, {"nolr", MfLogVariant::nolr},
        {"noclip", MfLogVariant::noclip},     {"moe", MfLogVariant::moe},         {"old3", MfLogVariant::old3}};
    auto it = names.find(name);
    if (it == names.end()) return std::nullopt;
    return it->second;
}

bool MfPlannedStep::nan_on(int rank) const {
    return std::any_of(nan_ranks.begin(), nan_ranks.end(), [rank](int r) { return r < 0 || r == rank; });
}

MindFormersPlan plan_mindformers_run(const SimOptions& sim, const MindFormersOptions& mf) {
    MindFormersPlan p;
    p.ranks = sim.ranks;
    p.pipeline_stages = sim.ranks >= 2 ? 2 : 1;
    p.epochs = kEpochs;
    p.first_step = sim.first_step + 1;
    p.last_step = sim.first_step + sim.steps;
    p.steps_per_epoch = std::max<std::int64_t>(1, (p.last_step + 1) / kEpochs);  // the run spans two epochs
    p.seed = sim.seed;
    p.restart_at = mf.restart_at;
    p.ckpt_every = std::max<std::int64_t>(1, mf.ckpt_every);
    // MindFormers saves after every ckpt_every-th step and a relaunch loads the latest save.
    if (p.restart_at >= 0) p.restart_resume = std::max(p.first_step, p.restart_at / p.ckpt_every * p.ckpt_every + 1);
    p.warmup = std::clamp<std::int64_t>(p.last_step / 10, 1, 100);
    p.base_ms = sim.step_ms > 0 ? sim.step_ms : 1752.0;
    p.stop_on_spikes = mf.stop_on_spikes;
    for (const auto& f : sim.faults) {
        if (f.type == Fault::Type::spike)
            p.spikes[f.step] = (p.spikes.count(f.step) ? p.spikes[f.step] : 1.0) * f.factor;
        if (f.type == Fault::Type::nan) p.nans[f.step].push_back(f.rank);
        if (f.type == Fault::Type::lr)
            p.lr_factors[f.step] = (p.lr_factors.count(f.step) ? p.lr_factors[f.step] : 1.0) * f.factor;
        if (f.type == Fault::Type::stop && f.step >= p.first_step && f.step <= p.last_step &&
            (p.stop_fault < 0 || f.step < p.stop_fault))
            p.stop_fault = f.step;
    }
    // A stop is the second of two consecutive spikes: make sure both are there (in msprobe's output too).
    if (p.stop_fault >= 0) {
        for (std::int64_t s : {p.stop_fault - 1, p.stop_fault}) {
            if (s < p.first_step) continue;
            const double had = p.spikes.count(s) ? p.spikes[s] : 1.0;
            if (had >= kStopSpike) continue;
            p.implied_spikes.push_back(Fault{Fault::Type::spike, s, -1, kStopSpike / had, {}});
            p.spikes[s] = kStopSpike;
        }
    }
    if (!p.stop_on_spikes) {
        p.stop_step = p.stop_fault;
    } else {
        MfStepSequence seq(p);
        while (auto st = seq.next())
            if (st->stop) p.stop_step = st->step;
    }
    return p;
}

MfStepSequence::MfStepSequence(const MindFormersPlan& plan)
    : plan_(plan), step_(plan.first_step), opt_(plan.first_step - 1) {}  // earlier steps all applied an update

std::optional<MfPlannedStep> MfStepSequence::next() {
    if (done_ || step_ > plan_.last_step) return std::nullopt;
    const MindFormersPlan& p = plan_;
    MfPlannedStep st;
    const std::int64_t g = step_++;
    const bool first_pass = g > reached_;
    reached_ = std::max(reached_, g);
    st.step = g;
    st.launch = launch_;
    st.first_of_launch = std::exchange(first_of_launch_, false);
    if (auto it = p.spikes.find(g); first_pass && it != p.spikes.end()) st.spike = it->second;
    if (auto it = p.nans.find(g); first_pass && it != p.nans.end()) st.nan_ranks = it->second;
    const double x = static_cast<double>(g);
    const int noise = first_pass ? -1 : -1 - launch_;  // a relaunch repeating a step draws new noise for it
    double gn = (0.5 + 1.6 * std::exp(-x / 150.0)) * (1 + 0.04 * gauss(p.seed, noise, g, ch_global_norm)) * st.spike;
    double loss = 2.2 + 8.5 * std::exp(-x / 120.0) + 0.03 * gauss(p.seed, noise, g, ch_loss);
    if (st.spike > 1) loss *= 1 + 0.25 * std::log10(st.spike);
    if (!st.nan_ranks.empty()) gn = loss = std::nan("");
    st.global_norm = static_cast<float>(gn);
    st.loss = loss;
    // TrainingStateMonitor.abnormal_global_norm_check; the wrapper applies the update only when norm <
    // threshold.
    if (st.global_norm >= kSpikeThreshold) {
        st.skipped = true;
        st.spike_count = ++count_;
        st.stop = p.stop_on_spikes && count_ >= kSpikeCountThreshold;
    } else {
        count_ = 0;
        if (std::isfinite(st.global_norm)) ++opt_;
    }
    if (g == p.stop_fault) st.stop = true;
    st.opt_step = opt_;
    double lr = lr_at(opt_, p.warmup, p.last_step);
    for (auto it = p.lr_factors.begin(); it != p.lr_factors.end() && it->first <= g; ++it) lr *= it->second;
    st.lr = static_cast<float>(lr);
    double ms = p.base_ms * (1 + 0.01 * gauss(p.seed, -1, g, ch_step_time));
    if (st.first_of_launch) ms += 150000 + 20000 * uniform01(p.seed, -1, g, ch_warmup);  // graph compilation
    st.per_step_ms = static_cast<std::int64_t>(ms);
    st.save = g % p.ckpt_every == 0 || (g == p.last_step && !st.stop);
    if (g == p.restart_resume - 1) opt_at_resume_ = opt_;
    st.restart_after = !st.stop && first_pass && g == p.restart_at && g < p.last_step;
    if (st.stop) done_ = true;
    if (st.restart_after) {  // relaunched from the last checkpoint
        ++launch_;
        count_ = 0;
        first_of_launch_ = true;
        step_ = p.restart_resume;
        opt_ = opt_at_resume_ >= 0 ? opt_at_resume_ : p.first_step - 1;
    }
    return st;
}

SimOptions msprobe_options_for(const SimOptions& sim, const MindFormersPlan& plan) {
    SimOptions out = sim;
    out.faults.clear();
    for (const auto& f : sim.faults)
        if (f.type != Fault::Type::stop) out.faults.push_back(f);
    for (const auto& f : plan.implied_spikes) out.faults.push_back(f);
    if (plan.restart_at >= 0) {
        Fault relaunch{Fault::Type::restart, plan.restart_at, -1, 1, {}};
        relaunch.resume = plan.restart_resume;
        out.faults.push_back(relaunch);
    }
    if (plan.stop_step >= 0) out.steps = std::min(sim.steps, plan.stop_step - sim.first_step + 1);
    return out;
}

bool run_mindformers_simulation(const SimOptions& sim, const MindFormersOptions& mf, const MindFormersPlan& plan,
                                const std::atomic<bool>& stop, MindFormersResult& result, std::string& error) {
    namespace fs = std::filesystem;
    const std::string output = sim.outdir + "/output";
    const std::string log_dir = output + "/log", msrun_dir = output + "/msrun_log";
    for (const auto& dir : {output, log_dir, msrun_dir}) {
        if (!make_dirs(dir)) {
            error = "cannot create " + dir;
            return false;
        }
    }
    std::error_code ec;
    MfJobText job;
    job.launch_dir = fs::canonical(sim.outdir, ec).string();
    job.output_dir = fs::canonical(output, ec).string();
    job.logger_name = "mindformers" + fs::canonical(log_dir, ec).string();
    if (ec) {
        error = "cannot resolve " + output;
        return false;
    }

    std::vector<RankFiles> files;
    std::vector<std::vector<MfParam>> params;
    for (int r = 0; r < plan.ranks; ++r) {
        const std::string rank_dir = log_dir + "/rank_" + std::to_string(r);
        if (mf.logs && (!make_dirs(rank_dir) || ::chmod(rank_dir.c_str(), 0750) != 0)) {
            error = "cannot create " + rank_dir;
            return false;
        }
        files.push_back({RotatingLog(rank_dir + "/info.log", mf.log_max_bytes, kBackupCount),
                         RotatingLog(msrun_dir + "/worker_" + std::to_string(r) + ".log", 0, kBackupCount)});
        params.push_back(stage_params(stage_of(r, plan), plan.pipeline_stages));
    }

    // Writes one record to both sinks of a rank, with one timestamp, one write per sink.
    auto emit = [&](int rank, const Record& rec) {
        if (!mf.logs) return true;
        const std::string time = asctime_now();
        RankFiles& f = files[static_cast<std::size_t>(rank)];
        const std::string text = file_sink_text(rec, time);
        if (!f.info.emit(text, result.rotations, error)) return false;
        std::int64_t never = 0;
        if (!f.worker.emit(stdout_sink_text(rec, time, job.logger_name), never, error)) return false;
        result.lines += std::count(text.begin(), text.end(), '\n');
        result.bytes += static_cast<std::int64_t>(text.size());
        return true;
    };
    auto raw_worker = [&](int rank, const std::string& text) {
        std::int64_t never = 0;
        return !mf.logs || files[static_cast<std::size_t>(rank)].worker.emit(text, never, error);
    };

    std::vector<double> loss_sum(static_cast<std::size_t>(plan.ranks), 0.0);
    std::vector<int> loss_count(static_cast<std::size_t>(plan.ranks), 0);
    int ckpt_times = 0;  // MindSpore adds _1, _2 ... to the prefix when a relaunch finds earlier checkpoints
    bool saved_this_launch = false;
    std::int64_t epoch = -1;
    std::unique_ptr<MfTensorboard> tensorboard;
    if (mf.tensorboard) tensorboard = std::make_unique<MfTensorboard>(output + "/tensorboard", plan, mf, sim.seed);
    MfStepSequence seq(plan);
    const auto t0 = std::chrono::steady_clock::now();
    for (std::int64_t i = 0; !stop.load(); ++i) {
        const auto next = seq.next();
        if (!next) break;
        const MfPlannedStep& st = *next;
        if (st.first_of_launch && tensorboard && !tensorboard->start_launch(st.launch, error)) return false;
        if (st.first_of_launch) {
            ++result.launches;
            std::fill(loss_sum.begin(), loss_sum.end(), 0.0);  // the epoch's mean begins again
            std::fill(loss_count.begin(), loss_count.end(), 0);
            if (saved_this_launch) ++ckpt_times;
            saved_this_launch = false;
            for (int r = 0; r < plan.ranks && mf.logs; ++r) {
                // The error.log handler creates its file at startup; nothing here logs at ERROR.
                const std::string error_log = log_dir + "/rank_" + std::to_string(r) + "/error.log";
                const int fd = ::open(error_log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
                if (fd >= 0) ::close(fd);
                const int pid = 40000 + 97 * st.launch + r;
                if (!raw_worker(r, "[WARNING] ME(" + std::to_string(pid) +
                                       ":281473441098720,MainProcess):" + mindspore_time_now() +
                                       " [mindspore/graph/_mark_deprecated.py:59] Module 'mindspore.common.api' is "
                                       "deprecated.\n"))
                    return false;
                if (r % 8 == 0 && !raw_worker(r, config_pprint(plan))) return false;
                for (const auto& rec : startup_records(job, plan))
                    if (!emit(r, rec)) return false;
                files[static_cast<std::size_t>(r)].info.close();
                files[static_cast<std::size_t>(r)].worker.close();
            }
        }
        if (const std::int64_t e = (st.step - 1) / plan.steps_per_epoch; e != epoch) {  // non-sink mean restarts
            epoch = e;
            std::fill(loss_sum.begin(), loss_sum.end(), 0.0);
            std::fill(loss_count.begin(), loss_count.end(), 0);
        }
        std::vector<MfRankStep> rank_steps;
        int is_health = 0;
        for (int r = 0; r < plan.ranks; ++r) {
            const bool last_stage = stage_of(r, plan) == plan.pipeline_stages - 1;
            rank_steps.push_back(rank_step(st, r, params[static_cast<std::size_t>(r)], last_stage, sim.seed));
            // get_checkpoint_health_info: any stage-0 rank at or over the threshold; always 0 without
            // pipeline.
            if (plan.pipeline_stages > 1 && stage_of(r, plan) == 0 &&
                rank_steps.back().embedding >= kEmbeddingThreshold)
                is_health = 1;
        }
        if (st.save) saved_this_launch = true;
        auto save_health = [&]() {
            const std::string name = checkpoint_file(0, ckpt_times, checkpoint_of(st, plan, mf.variant));
            ++result.checkpoints;
            return append_health_entry(output + "/health_ckpts.json", is_health, name, error);
        };
        for (int r = 0; r < plan.ranks && mf.logs; ++r) {
            const auto ur = static_cast<std::size_t>(r);
            const MfRankStep& rs = rank_steps[ur];
            loss_sum[ur] += rs.loss;
            ++loss_count[ur];
            const MfStepContext ctx{plan, mf.variant, loss_sum[ur] / loss_count[ur]};
            std::vector<Record> recs = step_records(st, rs, params[ur], ctx);
            if (st.save)
                for (auto& rec : save_records(st, plan, mf.variant, rs)) recs.push_back(std::move(rec));
            for (auto& rec : monitor_records(st, r, rs, params[ur], ctx)) recs.push_back(std::move(rec));
            if (!st.stop && st.step == plan.last_step) recs.push_back(training_over_record());
            for (const auto& rec : recs) {
                if (!emit(r, rec)) return false;
                if (rec.health_json_after && r == 0 && mf.health && !save_health()) return false;
            }
            if (st.stop && !raw_worker(r, stop_traceback(st, job))) return false;
            files[ur].info.close();
            files[ur].worker.close();
        }
        if (mf.health && !mf.logs && st.save && !save_health()) return false;
        for (int r = 0; tensorboard && r < plan.ranks; ++r)
            if (!tensorboard->write_step(st, r, rank_steps[static_cast<std::size_t>(r)], error)) return false;
        ++result.steps;
        result.stopped = st.stop;
        if (sim.step_ms > 0) {
            const auto due = t0 + std::chrono::milliseconds(static_cast<std::int64_t>(sim.step_ms) * (i + 1));
            while (!stop.load() && std::chrono::steady_clock::now() < due)
                std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
                    due - std::chrono::steady_clock::now(), std::chrono::milliseconds(50)));
        }
    }
    return true;
}

}  // namespace msmon
