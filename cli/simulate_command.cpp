// msmon simulate OUTDIR: writes a realistic msprobe run, optionally paced so it runs live.
#include <signal.h>

#include <atomic>
#include <cstdio>

#include "cli/arg_parser.hpp"
#include "cli/commands.hpp"
#include "core/sim/msprobe_simulator.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

const CommandSpec kSimulateSpec{
    "simulate",
    "OUTDIR [--ranks N] [--steps S] [--step-ms MS] [--params P] [--faults LIST] [--record-steps N] [--xy] [--seed N]",
    "Writes a training run's msprobe monitor output under OUTDIR/monitor_output, in the exact format of the\n"
    "real monitor: one <time>-rank<N>-<uid> folder per rank, grad/optimizer/param CSVs per step.\n"
    "Faults: spike@STEP[:rRANK][xFACTOR] (all gradients x100 by default), nan@STEP[:rRANK] (a NaN gradient).",
    {
        {"--ranks", "N", "ranks (default 8)"},
        {"--steps", "S", "optimizer steps (default 100)"},
        {"--first-step", "N", "first step number (default 0)"},
        {"--step-ms", "MS", "pause between steps, to run live (default 0: as fast as possible)"},
        {"--params", "P", "parameter tensors per rank (default 16)"},
        {"--faults", "LIST", "e.g. spike@12,nan@20 or nan@20:r3"},
        {"--record-steps", "N", "step_count_per_record: steps per CSV file (default 1)"},
        {"--xy", "", "also write activations (actv, actv_grad) with micro_step"},
        {"--seed", "N", "random seed (default 1)"},
    },
    1,
    1,
};

std::atomic<bool> g_sim_stop{false};
extern "C" void on_sim_signal(int) { g_sim_stop.store(true); }

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
        std::fprintf(stderr, "msmon simulate: %s\n", msg.c_str());
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
    std::int64_t ranks = o.ranks, params = o.params, step_ms = o.step_ms, record = o.step_count_per_record,
                 seed = static_cast<std::int64_t>(o.seed);
    IntOpt ints[] = {{"--ranks", 1, 65536, &ranks},          {"--steps", 1, 100000000, &o.steps},
                     {"--first-step", 0, 1000000000, &o.first_step}, {"--step-ms", 0, 3600000, &step_ms},
                     {"--params", 1, 100000, &params},      {"--record-steps", 1, 100000, &record},
                     {"--seed", 0, INT64_MAX, &seed}};
    for (const auto& opt : ints) {
        auto v = args->value(opt.name);
        if (!v) continue;
        auto n = parse_int(*v);
        if (!n || *n < opt.lo || *n > opt.hi)
            return usage_error(std::string(opt.name) + " takes a whole number from " + std::to_string(opt.lo) + " to " +
                               std::to_string(opt.hi));
        *opt.target = *n;
    }
    o.ranks = static_cast<int>(ranks);
    o.params = static_cast<int>(params);
    o.step_ms = static_cast<int>(step_ms);
    o.step_count_per_record = static_cast<int>(record);
    o.seed = static_cast<std::uint64_t>(seed);
    o.activations = args->has("--xy");
    if (auto f = args->value("--faults")) {
        auto faults = parse_fault_list(*f, error);
        if (!faults) return usage_error("--faults: " + error);
        o.faults = *faults;
    }
    struct sigaction sa {};
    sa.sa_handler = on_sim_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    SimResult result;
    if (!run_msprobe_simulation(o, g_sim_stop, result, error)) {
        std::fprintf(stderr, "msmon simulate: %s\n", error.c_str());
        return kExitFailure;
    }
    std::printf("wrote %lld steps x %d ranks: %lld files, %lld rows, %lld bytes under %s/monitor_output\n",
                static_cast<long long>(result.steps), o.ranks, static_cast<long long>(result.files),
                static_cast<long long>(result.rows), static_cast<long long>(result.bytes), o.outdir.c_str());
    return kExitOk;
}

}  // namespace msmon
