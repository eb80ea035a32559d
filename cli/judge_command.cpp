// msmon judge --store URL --job J: the checks that compare ranks, over the whole job in ClickHouse (docs/cluster.md).
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>

#include "cli/commands.hpp"
#include "cli/job_judge_loop.hpp"
#include "core/signals/stop_request.hpp"
#include "core/text/display_escape.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

const CommandSpec kJudgeSpec{
    "judge",
    "--store clickhouse://HOST:PORT/DB --job ID [--grace-ms MS] [--once] [--on-incident CMD] [--prom-textfile DIR]",
    "Judge the whole job where the whole job is: the checks that compare ranks (replicas of a weight, a reduced\n"
    "gradient or an optimizer moment that differ; a rank far from the others; the optimizer's step changing on\n"
    "every rank; a rank left behind) run over every node's values in ClickHouse, which the agents (msmon ingest\n"
    "--sink) ship. A step is judged once every rank that wrote the step before it has written it, or --grace-ms\n"
    "after its first row. Findings are written back into ClickHouse keyed by their origin, so any number of judges,\n"
    "restarted at any time, write each once; every reader (msmon anomalies --store, msmon-tui --store) shows them,\n"
    "in place of what one node's agent judged from its own ranks. Runs until SIGINT/SIGTERM.",
    {
        {"--store", "URL", "the job's ClickHouse (clickhouse://HOST:PORT/DB)"},
        {"--job", "ID", "the job to judge"},
        {"--grace-ms", "MS", "judge a step this long after its first row even if ranks are missing (default 5000)"},
        {"--poll-ms", "MS", "how often to look for new rows (default 250)"},
        {"--once", "", "judge the steps there are, then exit"},
        {"--name", "NAME", "this judge's name in judged_steps (default HOST:PID)"},
        {"--on-incident", "CMD",
         "run CMD (/bin/sh -c) once per new incident of the job (every node's and the judge's findings): its JSON "
         "on stdin, MSMON_STEP and MSMON_RANK set"},
        {"--on-incident-timeout", "S", "kill an --on-incident run (its process group) after S seconds (default 20)"},
        {"--prom-textfile", "DIR", "write per-rank gauges as the judge sees the job to DIR/msmon-judge.prom"},
    },
    0,
    0,
};

volatile std::sig_atomic_t g_stop = 0;

extern "C" void on_judge_stop(int) {
    g_stop = 1;
    request_stop();
}

std::optional<std::chrono::milliseconds> millis(const ParsedArgs& args, const char* name, std::int64_t fallback,
                                                std::string& error) {
    const auto text = args.value(name);
    if (!text) return std::chrono::milliseconds(fallback);
    const auto n = parse_int(*text);
    if (!n || *n < 0 || *n > 86'400'000) {
        error = std::string(name) + " takes milliseconds (0 to 86400000)";
        return std::nullopt;
    }
    return std::chrono::milliseconds(*n);
}

}  // namespace

const CommandSpec& judge_command_spec() {
    return kJudgeSpec;
}

int run_judge_command(int argc, char** argv) {
    struct sigaction sa {};
    sa.sa_handler = on_judge_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    bool help = false;
    std::string error;
    auto args = parse_args(kJudgeSpec, argc, argv, 2, help, error);
    if (help) {
        std::fputs(render_help(kJudgeSpec).c_str(), stdout);
        return kExitOk;
    }
    const auto usage = [](const std::string& text) {
        std::fprintf(stderr, "msmon judge: %s\n", escape_for_terminal(text).c_str());
        return kExitUsage;
    };
    if (!args) return usage(error);
    if (!args->positional.empty()) return usage("takes no folder: it reads the job from --store");
    const auto store = args->value("--store");
    const auto job = args->value("--job");
    if (!store || !job || job->empty()) return usage("needs --store clickhouse://HOST:PORT/DB and --job ID");
    JobJudgeOptions o;
    const auto target = parse_clickhouse_url(*store, error);
    if (!target) return usage(error);
    o.target = *target;
    o.job = *job;
    const auto grace = millis(*args, "--grace-ms", 5000, error);
    const auto poll = millis(*args, "--poll-ms", 250, error);
    if (!grace || !poll) return usage(error);
    o.grace = *grace;
    o.poll = std::max(*poll, std::chrono::milliseconds(10));
    o.once = args->has("--once");
    if (args->has("--on-incident")) {
        o.on_incident = args->value("--on-incident").value_or("");
        if (o.on_incident.find_first_not_of(" \t") == std::string::npos) return usage("--on-incident needs a command");
    }
    if (const auto t = args->value("--on-incident-timeout")) {
        const auto d = parse_double(*t);
        if (!d || !(*d > 0) || *d > 86400) return usage("--on-incident-timeout takes seconds (0 < S <= 86400)");
        o.on_incident_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(*d * 1000));
    }
    if (const auto dir = args->value("--prom-textfile")) {
        if (dir->empty()) return usage("--prom-textfile needs a folder");
        o.prom_dir = *dir;
    }
    char host[256] = {};
    o.name = args->value("--name").value_or(std::string(::gethostname(host, sizeof host - 1) == 0 ? host : "judge") +
                                            ":" + std::to_string(::getpid()));
    return run_job_judge(o, g_stop);
}

}  // namespace msmon
