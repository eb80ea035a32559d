// msmon ingest DIR... : read msprobe output into the store once, or follow it live until SIGINT/SIGTERM.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/store_target.hpp"
#include "core/args/arg_parser.hpp"
#include "core/config/config_file.hpp"
#include "core/config/msmon_settings.hpp"
#include "core/ingest/source_layout.hpp"
#include "core/signals/stop_request.hpp"
#include "core/text/display_escape.hpp"
#include "core/text/number_text.hpp"
#include "store/agent/node_agent.hpp"
#include "store/clickhouse/clickhouse_sink.hpp"
#include "store/ingest_session.hpp"
#include "store/reader.hpp"

namespace msmon {

namespace {

const CommandSpec kIngestSpec{
    "ingest",
    "DIR... [--db PATH] [--follow] [--poll-ms N] [--monitor-config PATH] [--sink clickhouse://HOST:PORT/DB "
    "--job ID [--node NAME]] [--prom-textfile DIR] [--on-incident CMD] [--json]",
    "Reads msprobe monitor output (a job folder, a monitor_output root, or one rank folder) into the store.\n"
    "Only whole lines are read; each file's offset is committed with its rows, so a killed ingest resumes\n"
    "exactly where it stopped. With --follow it keeps tailing (inotify, or polling) until SIGINT/SIGTERM.",
    {
        {"--db", "PATH", "store to write (default: $XDG_CACHE_HOME/msmon/<hash of DIRs>.db)"},
        trust_db_folder_option(),
        {"--follow", "", "keep following new folders, files and lines until interrupted"},
        {"--poll-ms", "N", "poll every N ms instead of inotify (network filesystems are polled anyway)"},
        {"--monitor-config", "PATH", "the job's msprobe config: its alert rules drive msprobe-compatible detection"},
        {"--follow-config-link", "",
         "--monitor-config is a symbolic link (or another user's link is on its way) and you mean it"},
        {"--global-norm-threshold", "X",
         "global norm at or above X is a spike (default: the job's global_norm_spike_threshold, else 3.0)"},
        {"--global-norm-count", "N",
         "consecutive spikes that stop the job (default: the job's global_norm_spike_count_threshold, else 10)"},
        {"--embedding-threshold", "X",
         "embedding_local_norm at or above X is flagged (default: the job's embedding_local_norm_threshold, else "
         "not checked)"},
        {"--cross-rank-memory", "MB",
         "memory for values waiting for the other ranks' same step (default 16); beyond it\n"
         "they are read back from the store when judged"},
        {"--sink", "URL",
         "also ship every row to ClickHouse (clickhouse://HOST:PORT/DB, its HTTP port): the store is\n"
         "the spool, nothing is lost or sent twice across outages and restarts"},
        {"--job", "ID", "the job id every shipped row is tagged with (required with --sink)"},
        {"--node", "NAME", "the node name shipped rows are tagged with (default: the host name)"},
        {"--sink-interval-ms", "N", "ship at most once per N ms (default 1000)"},
        {"--prom-textfile", "DIR", "write per-rank gauges to DIR/msmon.prom (node_exporter's textfile collector)"},
        {"--on-incident", "CMD",
         "run CMD (by /bin/sh -c) once per new incident, the incident as one JSON object on its stdin\n"
         "and MSMON_STEP, MSMON_RANK, MSMON_JOB, MSMON_STORE set; incidents already in the store are\n"
         "not new. One at a time, never holding up ingest; a failure is logged, not retried"},
        {"--on-incident-timeout", "S", "kill an --on-incident run (its process group) after S seconds (default 20)"},
        {"--json", "", "print the summary as one JSON document"},
    },
    1,
    0,
};

// For the signal handler only. The handlers are installed first thing, so a stop that comes while the store opens
// (a service stopped as it starts) is remembered and honoured once the engine exists, not lost to the default action.
std::atomic<IngestEngine*> g_engine{nullptr};
volatile std::sig_atomic_t g_stop_requested = 0;  // the signal that asked (SIGINT, SIGTERM), or 0

extern "C" void on_stop_signal(int sig) {
    g_stop_requested = sig;
    request_stop();
    if (IngestEngine* e = g_engine.load()) e->stop();
}

void install_stop_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

}  // namespace

int run_ingest_command(int argc, char** argv) {
    install_stop_handlers();
    bool help = false;
    std::string error;
    auto args = parse_args(kIngestSpec, argc, argv, 2, help, error);
    if (help) {
        std::fputs(render_help(kIngestSpec).c_str(), stdout);
        return kExitOk;
    }
    if (!args) {
        std::fprintf(stderr, "msmon ingest: %s\n", escape_for_terminal(error).c_str());
        return kExitUsage;
    }
    IngestOptions options;
    options.roots = args->positional;
    options.follow = args->has("--follow");
    if (auto ms = args->value("--poll-ms")) {
        auto v = parse_int(*ms);
        if (!v || *v <= 0 || *v > 3600000) {
            std::fprintf(stderr, "msmon ingest: --poll-ms takes a number of milliseconds (1..3600000)\n");
            return kExitUsage;
        }
        options.poll_ms = static_cast<int>(*v);
    }
    if (auto path = args->value("--monitor-config")) {
        const ConfigRead read = read_monitor_config(ConfigTarget(*path, args->has("--follow-config-link")), 1);
        if (read.status != ConfigRead::Status::ok) {
            std::fprintf(stderr, "msmon ingest: cannot read --monitor-config '%s': %s\n",
                         escape_for_terminal(*path).c_str(), escape_for_terminal(read.error).c_str());
            return kExitFailure;
        }
        options.detectors.monitor_config_text = read.doc.dump();
    }
    struct NumberFlag {
        const char* name;
        double* target;
    };
    double spike = 0, count = 0, embedding = 0;
    double cross_mb = static_cast<double>(options.detectors.cross_rank_memory_bytes) / (1 << 20);
    NumberFlag numbers[] = {{"--global-norm-threshold", &spike},
                            {"--global-norm-count", &count},
                            {"--embedding-threshold", &embedding},
                            {"--cross-rank-memory", &cross_mb}};
    for (const auto& f : numbers) {
        auto v = args->value(f.name);
        if (!v) continue;
        auto d = parse_double(*v);
        if (!d || !std::isfinite(*d) || *d < 0) {
            std::fprintf(stderr, "msmon ingest: %s takes a number >= 0\n", f.name);
            return kExitUsage;
        }
        *f.target = *d;
    }
    // Given, a flag overrides the job's own value (core/detect/job_thresholds.hpp).
    if (args->value("--global-norm-threshold")) options.detectors.global_norm_threshold = spike;
    if (args->value("--global-norm-count"))
        options.detectors.global_norm_count_threshold = static_cast<std::int64_t>(std::min(count, 1e15));
    options.detectors.cross_rank_memory_bytes = static_cast<std::size_t>(std::min(cross_mb, 1e6) * (1 << 20));
    if (args->value("--embedding-threshold")) options.detectors.embedding_norm_threshold = embedding;
    const bool json = args->has("--json");
    const std::string db = args->value("--db").value_or(default_store_path(options.roots));

    std::optional<ShipperOptions> sink;
    std::chrono::milliseconds sink_interval(1000);
    std::string node;
    {
        char host[256] = {};
        node = ::gethostname(host, sizeof host - 1) == 0 ? host : "node";
    }
    if (auto n = args->value("--node")) node = *n;
    const std::string job = args->value("--job").value_or("");
    if (auto url = args->value("--sink")) {
        auto target = parse_clickhouse_url(*url, error);
        if (!target) {
            std::fprintf(stderr, "msmon ingest: --sink: %s\n", escape_for_terminal(error).c_str());
            return kExitUsage;
        }
        if (job.empty() || node.empty()) {
            std::fprintf(stderr, "msmon ingest: --sink needs --job ID (and a --node NAME if the host has none)\n");
            return kExitUsage;
        }
        sink = ShipperOptions{*target, job, node};
        if (auto ms = args->value("--sink-interval-ms")) {
            auto v = parse_int(*ms);
            if (!v || *v < 10 || *v > 600000) {
                std::fprintf(stderr, "msmon ingest: --sink-interval-ms takes 10..600000\n");
                return kExitUsage;
            }
            sink_interval = std::chrono::milliseconds(*v);
        }
    }
    const std::string prom_dir = args->value("--prom-textfile").value_or("");
    if (!prom_dir.empty()) {
        struct stat st {};
        if (::stat(prom_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
            std::fprintf(stderr, "msmon ingest: --prom-textfile '%s' is not a folder\n",
                         escape_for_terminal(prom_dir).c_str());
            return kExitUsage;
        }
    }

    // msmon's settings file: its on_incident command and timeout unless the flags say otherwise.
    const LoadedSettings settings = load_settings();
    for (const auto& m : settings.messages())
        std::fprintf(stderr, "msmon: settings: %s\n", escape_for_terminal(m).c_str());
    const std::string on_incident = args->value("--on-incident").value_or(settings.settings.on_incident);
    std::chrono::milliseconds hook_timeout(static_cast<std::int64_t>(settings.settings.on_incident_timeout_s * 1000));
    if (auto t = args->value("--on-incident-timeout")) {
        auto d = parse_double(*t);
        if (!d || !(*d > 0) || *d > 86400) {
            std::fprintf(stderr, "msmon ingest: --on-incident-timeout takes seconds (0 < S <= 86400)\n");
            return kExitUsage;
        }
        hook_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(*d * 1000));
    }
    if (args->has("--on-incident") && on_incident.find_first_not_of(" \t") == std::string::npos) {
        std::fprintf(stderr, "msmon ingest: --on-incident needs a command\n");
        return kExitUsage;
    }

    IngestSession::OpenStatus status;
    const StoreAccess access{args->has(kTrustDbFolderOption)};
    auto session = IngestSession::open(db, options, status, error,
                                       sink ? ClickHouseShipper::destination(*sink) : std::string(), access);
    if (!session) {
        spdlog::error("{}", error);
        return kExitFailure;
    }
    IngestEngine& engine = session->engine();
    std::mutex print_mu;
    engine.on_notice = [&](const std::string& msg) {
        std::lock_guard lock(print_mu);
        std::fprintf(stderr, "msmon: %s\n", escape_for_terminal(msg).c_str());
    };
    const auto start = std::chrono::steady_clock::now();
    if (options.follow) {
        // Started before the job: say once what it waits for (the engine says when a folder appears).
        engine.on_caught_up = [&] {
            if (engine.counters().files.load() != 0 || engine.roots_missing() != 0) return;
            std::string where;
            for (const auto& r : options.roots) where += (where.empty() ? "" : ", ") + r;
            std::lock_guard lock(print_mu);
            std::fprintf(stderr, "msmon: nothing msmon reads under %s yet: waiting for it. It looks for %s.\n",
                         escape_for_terminal(where).c_str(), kWhatMsmonReads);
        };
    }
    if (options.follow && !json) {
        auto last = start;
        engine.on_commit = [&, last](const CommitInfo& info) mutable {
            if (info.committed_at - last < std::chrono::seconds(1)) return;
            last = info.committed_at;
            const auto& c = engine.counters();
            std::lock_guard lock(print_mu);
            std::printf("[%6.1fs] %llu rows, %llu values, %llu files, %zu ranks, %llu malformed lines (%s)\n",
                        std::chrono::duration<double>(info.committed_at - start).count(),
                        static_cast<unsigned long long>(c.rows.load()),
                        static_cast<unsigned long long>(c.values.load()),
                        static_cast<unsigned long long>(c.files.load()), engine.rank_count(),
                        static_cast<unsigned long long>(c.issues.load()), engine.watch_mode());
            std::fflush(stdout);
        };
    }
    // The agent beside the ingest: shipping, the gauges file and the --on-incident command.
    auto say = [&](const std::string& line) {
        std::lock_guard lock(print_mu);
        std::fprintf(stderr, "%s\n", escape_for_terminal(line).c_str());
    };
    std::unique_ptr<NodeAgent> agent;
    try {
        agent = std::make_unique<NodeAgent>(
            AgentOptions{db, access, options.follow, options.roots, sink, sink_interval, prom_dir, job, node,
                         on_incident, hook_timeout, [&engine] { return engine.read_progress(); }},
            say);
    } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
        return kExitFailure;
    }
    if (options.follow) {
        agent->start_following();
        auto print = std::move(engine.on_commit);
        engine.on_commit = [&, print](const CommitInfo& info) {
            if (print) print(info);
            agent->wake();
        };
    }
    g_engine.store(&engine);
    if (g_stop_requested) engine.stop();
    spdlog::info("ingest {} roots into {} (follow={})", options.roots.size(), db, options.follow);
    const bool ok = engine.run(error);
    g_engine.store(nullptr);
    // A one-shot ingest cut short by a signal: what was read is committed, but the store is not the folder's. It
    // exits 128 + the signal, saying so (it once said "ingested N files" and exited 0 with a third stored), and does
    // not wait for ClickHouse or commands: the user asked it to stop.
    const int interrupted = options.follow ? 0 : static_cast<int>(g_stop_requested);
    agent->finish(interrupted != 0);
    if (!ok) {
        spdlog::error("{}", error);
        return kExitFailure;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    StoreSummary summary;
    try {
        summary = open_sqlite_reader(db, access)->summary();
    } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
        return kExitFailure;
    }
    const auto& c = engine.counters();
    const bool found_nothing = !interrupted && !options.follow && c.files.load() == 0;
    if (json) {
        nlohmann::ordered_json j;
        j["store"] = db;
        j["watch"] = engine.watch_mode();
        j["files"] = c.files.load();
        j["rows"] = c.rows.load();
        j["values"] = c.values.load();
        j["series"] = summary.series;
        j["ranks"] = summary.ranks;
        j["runs"] = summary.runs;
        j["errors"] = c.issues.load();
        j["repeats"] = summary.repeats;
        j["cross_rank_waiting_peak_bytes"] = c.cross_rank_peak_bytes.load();
        j["seconds"] = seconds;
        if (interrupted) j["interrupted"] = interrupted == SIGINT ? "SIGINT" : "SIGTERM";
        if (const HookCounters* runs = agent->command_runs()) {
            const auto& h = *runs;
            j["on_incident"] = {{"ran", h.ran.load()},
                                {"failed", h.failed.load()},
                                {"timed_out", h.timed_out.load()},
                                {"dropped", h.dropped.load()}};
        }
        if (agent->writes_gauges())
            j["prom_textfile"] = {{"failed_writes", agent->gauge_write_failures()},
                                  {"error", agent->gauge_last_error()}};
        if (const ShipperCounters* shipped = agent->shipped()) {
            j["shipped_values"] = shipped->values.load();
            j["ship_failures"] = shipped->failures.load();
            j["ship_pending"] = !agent->ship_ok();
        }
        std::printf("%s\n", j.dump(2).c_str());
    } else if (!found_nothing) {
        std::printf(
            "%s %llu files: %llu rows, %llu values (store: %lld series, %lld ranks, %lld runs), "
            "%llu malformed lines, %.3f s\nstore: %s\n",
            interrupted ? "interrupted in" : "ingested", static_cast<unsigned long long>(c.files.load()),
            static_cast<unsigned long long>(c.rows.load()), static_cast<unsigned long long>(c.values.load()),
            static_cast<long long>(summary.series), static_cast<long long>(summary.ranks),
            static_cast<long long>(summary.runs), static_cast<unsigned long long>(c.issues.load()), seconds,
            db.c_str());
        if (c.issues.load() > 0) std::printf("malformed lines are listed in the log (%s)\n", "msmon.log");
        if (const HookCounters* runs = agent->command_runs()) {
            const auto& h = *runs;
            std::printf("--on-incident: ran %llu times, %llu failed (%llu past the timeout), %llu dropped\n",
                        static_cast<unsigned long long>(h.ran.load() + h.failed.load()),
                        static_cast<unsigned long long>(h.failed.load()),
                        static_cast<unsigned long long>(h.timed_out.load()),
                        static_cast<unsigned long long>(h.dropped.load()));
        }
        if (const std::uint64_t failed = agent->gauge_write_failures(); failed > 0) {
            const std::string last = agent->gauge_last_error();
            std::printf("--prom-textfile: %llu writes failed%s%s\n", static_cast<unsigned long long>(failed),
                        last.empty() ? "" : ", the last: ", escape_for_terminal(last).c_str());
        }
        if (const ShipperCounters* shipped = agent->shipped())
            std::printf("shipped %llu values to %s\n", static_cast<unsigned long long>(shipped->values.load()),
                        sink->target.text().c_str());
    }
    if (found_nothing) {
        // Nothing read and nothing stored before: a wrong folder, or a layout msmon does not know. Say what it
        // looked for rather than exit 0 on an empty store.
        std::string where;
        for (const auto& r : options.roots) where += (where.empty() ? "" : ", ") + r;
        std::fprintf(stderr, "msmon ingest: nothing msmon reads under %s. It looks for %s.\n",
                     escape_for_terminal(where).c_str(), kWhatMsmonReads);
        return kExitFailure;
    }
    if (interrupted) {
        std::fprintf(stderr,
                     "msmon ingest: interrupted: %llu rows stored so far, of %llu files found; run it again to go on\n",
                     static_cast<unsigned long long>(c.rows.load()), static_cast<unsigned long long>(c.files.load()));
        return 128 + interrupted;
    }
    const bool ship_ok = agent->ship_ok();
    const std::string ship_error = agent->ship_error();
    agent.reset();
    if (!ship_ok && options.follow) {
        // A follower stopped (how a service stops: exit 0); what did not ship waits in the store.
        spdlog::warn("not everything reached ClickHouse ({}); the rest ships on the next run with the same --db",
                     ship_error);
    } else if (!ship_ok) {
        spdlog::error("not everything reached ClickHouse ({}); the rest ships on the next run with the same --db",
                      ship_error);
        return kExitFailure;
    }
    return kExitOk;
}

const CommandSpec& ingest_command_spec() {
    return kIngestSpec;
}

}  // namespace msmon
