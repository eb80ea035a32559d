// msmon simulate OUTDIR: writes a realistic msprobe run (and MindFormers' logs beside it), optionally paced
// so it runs live.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "cli/commands.hpp"
#include "core/args/arg_parser.hpp"
#include "core/files/replacement_file.hpp"
#include "core/sim/fault_truth.hpp"
#include "core/sim/mindformers_simulator.hpp"
#include "core/sim/monitor_config_follower.hpp"
#include "core/sim/msprobe_simulator.hpp"
#include "core/text/display_escape.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

const CommandSpec kSimulateSpec{
    "simulate",
    "OUTDIR [--ranks N] [--tp N] [--steps S] [--step-ms MS] [--params P] [--faults LIST] [--truth FILE]\n"
    "       [--record-steps N] [--xy] [--seed N] [--logs] [--health] [--log-variant V] [--log-max-bytes N]\n"
    "       [--ckpt-every N] [--restart-at S] [--tensorboard] [--moe-experts N] [--expert-collapse "
    "STEP[:LAYER:EXPERT]]",
    "Writes a training run's msprobe monitor output under OUTDIR/monitor_output, in the exact format of the\n"
    "real monitor: one <time>-rank<N>-<uid> folder per rank, grad/optimizer/param CSVs per step.\n"
    "With --logs, also what MindFormers writes for the same job under OUTDIR/output: log/rank_<N>/info.log\n"
    "(rotating) and msrun_log/worker_<N>.log, with 2 pipeline stages when ranks >= 2. The log's step N\n"
    "is msprobe's step N.\n"
    "Ranks differ as data-parallel ranks do (each its own batch); grad_reduced is their mean, the same on every\n"
    "rank; Adam's moments follow from it (calibrated against real msprobe runs). With --tp N, ranks are\n"
    "data-parallel x tensor-parallel in Megatron's order: rank r holds shard r % N, and only ranks of one shard\n"
    "are replicas (the same weights, grad_reduced and moments); shards differ, under the same names\n"
    "(LayerNorm weights are held whole on every rank, as Megatron holds them).\n"
    "Faults (comma-separated; a one-off fault acts the first time the job reaches its step):\n"
    "  spike@S[:rR][xF]   gradients x F (default 100) at step S, on every rank or on rank R\n"
    "  nan@S[:rR][:mM]    a NaN in module M's output (default: a module mid-network) on rank R (every rank if\n"
    "                     none); it flows on to every rank and stays\n"
    "  baddata@S:rR[xF]   rank R's batch x F (default 25) at step S\n"
    "  drift@S[:mM][xF]   from step S module M grows smoothly to x F (default 10) at the last step\n"
    "  stall@S:rR         rank R writes nothing after step S; the others go on\n"
    "  restart@S          the job restarts after step S: new run folders resume at the last multiple of 10\n"
    "                     before S\n"
    "  stop@S             spikes at S-1 and S, and the data-skip ValueError ends the job at S\n"
    "  sdc@S:rR[:mW][xF]  rank R's copy of weight W (default: one mid-network) x F (default 1.01) right after\n"
    "                     step S-1's update: silent data corruption of one replica; it departs from step S on\n"
    "  sdcgrad@S:rR[:mW][xF]  rank R's all-reduced gradient of W x F (default 1.5) at step S, on that rank only;\n"
    "                     its moments and weights depart after it and stay apart\n"
    "  lr@S[xF]           every rank's learning rate x F (default 20) from step S on: every weight's update x F\n"
    "  dead@S[:mM]        module M (default: a linear mid-network) outputs zeros on every rank from step S on;\n"
    "                     no gradient flows back through it\n"
    "  M is a module as the CSVs name it (module.module.decoder.layers.1.mlp.linear_fc2) or a unique tail of\n"
    "  one (layers.1.mlp.linear_fc2); W a weight (layers.1.mlp.linear_fc2.weight, or its module). --truth FILE\n"
    "  writes where each fault was planted, as JSON.\n"
    "With --logs, any two consecutive global norms >= 3.0 end the job the same way.\n"
    "With --tensorboard, also MindFormers' TensorBoard event files under OUTDIR/output/tensorboard/rank_<N>/:\n"
    "the step scalars, TrainingStateMonitor's weight_norm and throughput_linearity, the config as text, and\n"
    "expert_load per MoE layer and expert (add_scalars sub-writer folders).",
    {
        {"--ranks", "N", "ranks (default 8)"},
        {"--first-rank", "R", "number the ranks from R (one node of a multi-node job; msprobe output only)"},
        {"--tp", "N",
         "tensor-parallel size: ranks are data-parallel x N, rank r holds shard r % N (default 1: every rank a "
         "replica)"},
        {"--steps", "S", "optimizer steps (default 100)"},
        {"--first-step", "N", "first step number (default 0)"},
        {"--step-ms", "MS", "pause between steps, to run live (default 0: as fast as possible)"},
        {"--params", "P", "parameter tensors per rank (default 16)"},
        {"--faults", "LIST",
         "e.g. spike@12,nan@20:r3:mlayers.1.mlp.linear_fc2,baddata@30:r1x25,sdc@40:r2,lr@50,restart@45"},
        {"--truth", "FILE", "write the planted faults (step, rank, tensor kind, module) as JSON to FILE"},
        {"--record-steps", "N", "step_count_per_record: steps per CSV file (default 1)"},
        {"--xy", "", "also write activations (actv, actv_grad) with micro_step"},
        {"--seed", "N", "random seed (default 1)"},
        {"--logs", "", "also write MindFormers logs (info.log per rank, msrun worker logs)"},
        {"--health", "", "also write output/health_ckpts.json as rank 0 does at each checkpoint"},
        {"--log-variant", "V", "step-line shape: standard|nonsink|nolr|noclip|moe|old3 (default standard)"},
        {"--log-max-bytes", "N", "info.log rotation size, 0 for none (default 52428800, as MindFormers)"},
        {"--ckpt-every", "N", "checkpoint every N steps (default 10)"},
        {"--restart-at", "S",
         "the job dies after step S and is relaunched from its last checkpoint (--ckpt-every): new msprobe run "
         "folders, the same logs appended to, the steps since that checkpoint trained again"},
        {"--tensorboard", "", "also write MindFormers' TensorBoard event files (output/tensorboard/rank_<N>/)"},
        {"--moe-experts", "N", "experts per MoE layer in expert_load (default 8; 2 layers)"},
        {"--monitor-config", "FILE",
         "follow msprobe's monitor config FILE as TrainerMon does: read once at start, or with DYNAMIC_MONITOR=True "
         "in the environment whenever it changes (dynamic_on, collect_times, step_interval; dynamic_on false written "
         "back when a collection ends); only the steps it collects are written"},
        {"--expert-collapse", "STEP[:L:E]", "from STEP on, expert E of layer L takes most tokens (default L 1, E 3)"},
    },
    1,
    1,
};

std::atomic<bool> g_sim_stop{false};
extern "C" void on_sim_signal(int) {
    g_sim_stop.store(true);
}

}  // namespace

int run_simulate_command(int argc, char** argv) {
    bool help = false;
    std::string error;
    auto args = parse_args(kSimulateSpec, argc, argv, 2, help, error);
    if (help) {
        std::fputs(render_help(kSimulateSpec).c_str(), stdout);
        return kExitOk;
    }
    auto usage_error = [](const std::string& msg) {
        std::fprintf(stderr, "msmon simulate: %s\n", escape_for_terminal(msg).c_str());
        return kExitUsage;
    };
    if (!args) return usage_error(error);
    SimOptions o;
    o.outdir = args->positional.front();
    struct IntOpt {
        const char* name;
        std::int64_t lo, hi;
        std::int64_t* target;
    };
    MindFormersOptions mf;
    std::int64_t ranks = o.ranks, params = o.params, step_ms = o.step_ms, record = o.step_count_per_record,
                 seed = static_cast<std::int64_t>(o.seed);
    std::int64_t first_rank = 0, tp = o.tp;
    IntOpt ints[] = {{"--ranks", 1, 65536, &ranks},
                     {"--tp", 1, 65536, &tp},
                     {"--first-rank", 0, 1 << 20, &first_rank},
                     {"--steps", 1, 100000000, &o.steps},
                     {"--first-step", 0, 1000000000, &o.first_step},
                     {"--step-ms", 0, 3600000, &step_ms},
                     {"--params", 1, 100000, &params},
                     {"--record-steps", 1, 100000, &record},
                     {"--seed", 0, INT64_MAX, &seed},
                     {"--log-max-bytes", 0, 1LL << 40, &mf.log_max_bytes},
                     {"--ckpt-every", 1, 1000000000, &mf.ckpt_every},
                     {"--restart-at", 1, 1100000000, &mf.restart_at}};
    std::int64_t experts = mf.moe_experts;
    for (const auto& opt : ints) {
        auto v = args->value(opt.name);
        if (!v) continue;
        auto n = parse_int(*v);
        if (!n || *n < opt.lo || *n > opt.hi)
            return usage_error(std::string(opt.name) + " takes a whole number from " + std::to_string(opt.lo) + " to " +
                               std::to_string(opt.hi));
        *opt.target = *n;
    }
    if (auto v = args->value("--moe-experts")) {
        auto n = parse_int(*v);
        if (!n || *n < 2 || *n > 1024) return usage_error("--moe-experts takes a whole number from 2 to 1024");
        experts = *n;
    }
    mf.moe_experts = static_cast<int>(experts);
    if (auto v = args->value("--expert-collapse")) {
        // STEP or STEP:LAYER:EXPERT
        std::string_view text = *v;
        std::int64_t parts[3] = {-1, mf.collapse_layer, mf.collapse_expert};
        int count = 0;
        while (count < 3) {
            const auto colon = text.find(':');
            auto n = parse_int(text.substr(0, colon));
            if (!n || *n < 0) return usage_error("--expert-collapse takes STEP or STEP:LAYER:EXPERT");
            parts[count++] = *n;
            if (colon == std::string_view::npos) break;
            text = text.substr(colon + 1);
        }
        if ((count != 1 && count != 3) || parts[1] >= mf.moe_layers || parts[2] >= mf.moe_experts)
            return usage_error("--expert-collapse takes STEP or STEP:LAYER:EXPERT (layer < " +
                               std::to_string(mf.moe_layers) + ", expert < " + std::to_string(mf.moe_experts) + ")");
        mf.collapse_step = parts[0];
        mf.collapse_layer = static_cast<int>(parts[1]);
        mf.collapse_expert = static_cast<int>(parts[2]);
    }
    o.ranks = static_cast<int>(ranks);
    o.first_rank = static_cast<int>(first_rank);
    // A node holds whole tensor-parallel groups, as Megatron places them.
    if (ranks % tp != 0 || first_rank % tp != 0)
        return usage_error("--tp " + std::to_string(tp) + " must divide --ranks" +
                           (first_rank != 0 ? " and --first-rank" : std::string()));
    o.tp = static_cast<int>(tp);
    if (first_rank != 0 && (args->has("--logs") || args->has("--health")))
        return usage_error("--first-rank applies to msprobe output only (not with --logs or --health)");
    o.params = static_cast<int>(params);
    o.step_ms = static_cast<int>(step_ms);
    o.step_count_per_record = static_cast<int>(record);
    o.seed = static_cast<std::uint64_t>(seed);
    o.activations = args->has("--xy");
    if (auto v = args->value("--monitor-config")) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(*v, ec))
            return usage_error("--monitor-config " + *v + " is not a file (msprobe's monitor config JSON)");
        o.monitor_config = *v;
        o.dynamic_monitor = MonitorConfigFollower::dynamic_mode_from_env();
    }
    if (auto f = args->value("--faults")) {
        auto faults = parse_fault_list(*f, error);
        if (!faults) return usage_error("--faults: " + error);
        o.faults = *faults;
    }
    mf.logs = args->has("--logs");
    mf.health = args->has("--health");
    mf.tensorboard = args->has("--tensorboard");
    const bool mindformers = mf.logs || mf.health || mf.tensorboard;
    mf.stop_on_spikes = mindformers;  // without MindFormers output, msprobe's output stays as it always was
    if (auto v = args->value("--log-variant")) {
        auto variant = parse_mf_log_variant(*v);
        if (!variant) return usage_error("--log-variant takes " + std::string(kMfLogVariantNames));
        mf.variant = *variant;
    }
    if (args->has("--restart-at") && (mf.restart_at <= o.first_step || mf.restart_at >= o.first_step + o.steps))
        return usage_error("--restart-at must be a step the run continues after: " + std::to_string(o.first_step + 1) +
                           " to " + std::to_string(o.first_step + o.steps - 1));
    if (args->has("--restart-at") &&
        std::any_of(o.faults.begin(), o.faults.end(), [](const Fault& f) { return f.type == Fault::Type::restart; }))
        return usage_error("--restart-at and a restart@ fault both restart the job: give one of them");
    struct sigaction sa {};
    sa.sa_handler = on_sim_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    const MindFormersPlan plan = plan_mindformers_run(o, mf);
    const SimOptions msprobe = msprobe_options_for(o, plan);
    // The faults are placed (their modules found) before anything is written; the truth is there from the start.
    const std::string truth = fault_truth_json(msprobe, plan.stop_step, error);
    if (truth.empty()) return usage_error("--faults: " + error);
    if (auto path = args->value("--truth")) {
        std::error_code ec;
        const auto target = std::filesystem::path(*path);
        const std::string parent = target.has_parent_path() ? target.parent_path().string() : ".";
        std::filesystem::create_directories(parent, ec);  // it may be under OUTDIR
        // Made new and renamed into place: a link planted under that name is replaced, not written through.
        ReplacementFile file;
        std::string werr;
        if (!file.open(parent, target.filename().string(), werr) || ::fchmod(file.fd(), 0644) != 0 ||
            !file.write_all(truth, werr) || !file.replace(werr)) {
            std::fprintf(stderr, "msmon simulate: cannot write %s: %s\n", escape_for_terminal(*path).c_str(),
                         escape_for_terminal(werr).c_str());
            return kExitFailure;
        }
    }
    SimResult result;
    MindFormersResult mf_result;
    std::string mf_error;
    bool mf_ok = true;
    // The two writers run side by side with the same pacing, as the trainer's two outputs do.
    std::thread mf_thread;
    if (mindformers)
        mf_thread = std::thread([&] {
            try {
                mf_ok = run_mindformers_simulation(o, mf, plan, g_sim_stop, mf_result, mf_error);
            } catch (const std::exception& e) {
                mf_error = e.what();
                mf_ok = false;
                g_sim_stop.store(true);
            }
        });
    bool ok = false;
    try {
        ok = run_msprobe_simulation(msprobe, g_sim_stop, result, error);
    } catch (const std::exception& e) {  // the MindFormers writer is stopped and joined before this is said
        error = e.what();
        g_sim_stop.store(true);
    }
    if (mf_thread.joinable()) mf_thread.join();
    if (!ok || !mf_ok) {
        std::fprintf(stderr, "msmon simulate: %s\n", escape_for_terminal(ok ? mf_error : error).c_str());
        return kExitFailure;
    }
    std::printf("wrote %lld steps x %d ranks: %lld files, %lld rows, %lld bytes under %s/monitor_output\n",
                static_cast<long long>(result.steps), o.ranks, static_cast<long long>(result.files),
                static_cast<long long>(result.rows), static_cast<long long>(result.bytes), o.outdir.c_str());
    if (mindformers)
        std::printf(
            "wrote MindFormers output for %lld steps in %d launch(es): %lld log lines, %lld rotations, "
            "%lld checkpoints under %s/output\n",
            static_cast<long long>(mf_result.steps), mf_result.launches, static_cast<long long>(mf_result.lines),
            static_cast<long long>(mf_result.rotations), static_cast<long long>(mf_result.checkpoints),
            o.outdir.c_str());
    if (plan.stop_step >= 0)
        std::printf("the job stopped at step %lld (global norm spikes, ValueError)\n",
                    static_cast<long long>(plan.stop_step));
    return kExitOk;
}

const CommandSpec& simulate_command_spec() {
    return kSimulateSpec;
}

}  // namespace msmon
