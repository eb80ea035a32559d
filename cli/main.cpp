// msmon: the headless engine — ingest, query, anomalies, health, config, export, simulate, judge.
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/commands.hpp"
#include "core/config/msmon_settings.hpp"
#include "core/log/logging.hpp"
#include "core/text/display_escape.hpp"
#include "core/version/build_info.hpp"

namespace {

constexpr const char* kUsage =
    "usage: msmon COMMAND [options]   (msmon COMMAND --help for each)\n"
    "\n"
    "commands:\n"
    "  ingest DIR...      read msprobe monitor output into the store (--follow to keep tailing)\n"
    "  query (DIR|--db)   print stored values: rank,kind,vpp_stage,name,step,micro_step,op,value\n"
    "  anomalies (DIR|--db) msprobe's anomaly dumps and msmon's own detections, ranked\n"
    "  health (DIR|--db)  checkpoint health, latest healthy checkpoint, data skips and stops\n"
    "  config ACTION CONFIG  show or change msprobe's monitor config safely (enable, stop, disable, set)\n"
    "  export (DIR|--db) --trend-db OUTDIR  write msprobe's monitor_data.trend.db (as data2db does)\n"
    "  judge --store URL --job ID  the checks that compare ranks, over every node's ranks in ClickHouse\n"
    "  simulate OUTDIR    write a realistic msprobe run (for demos and tests)\n"
    "  settings           msmon's own settings file: what applies, and what in it is wrong\n"
    "  docs DIR           write msmon's man page and bash/zsh completions into DIR\n"
    "\n"
    "  --version          msmon's version, the commit it was built from and the build date\n";

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
        std::fputs(kUsage, argc < 2 ? stderr : stdout);
        return argc < 2 ? msmon::kExitUsage : msmon::kExitOk;
    }
    const std::string cmd = argv[1];
    if (cmd == "--version" || cmd == "version") {
        std::printf("%s\n", msmon::version_line("msmon").c_str());
        return msmon::kExitOk;
    }
    msmon::init_logging("msmon", true);
    try {
        // The bounds on what is read, from msmon's settings (what is wrong in them is said by the commands that
        // use the rest: ingest, settings).
        msmon::set_input_limits(msmon::load_settings().settings.limits);
        if (cmd == "ingest") return msmon::run_ingest_command(argc, argv);
        if (cmd == "query") return msmon::run_query_command(argc, argv);
        if (cmd == "simulate") return msmon::run_simulate_command(argc, argv);
        if (cmd == "anomalies") return msmon::run_anomalies_command(argc, argv);
        if (cmd == "health") return msmon::run_health_command(argc, argv);
        if (cmd == "config") return msmon::run_config_command(argc, argv);
        if (cmd == "export") return msmon::run_export_command(argc, argv);
        if (cmd == "settings") return msmon::run_settings_command(argc, argv);
        if (cmd == "docs") return msmon::run_docs_command(argc, argv);
        if (cmd == "judge") return msmon::run_judge_command(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "msmon %s: %s\n", msmon::escape_for_terminal(cmd).c_str(),
                     msmon::escape_for_terminal(e.what()).c_str());
        return msmon::kExitFailure;
    }
    std::fprintf(stderr, "msmon: unknown command '%s'\n%s", msmon::escape_for_terminal(cmd).c_str(), kUsage);
    return msmon::kExitUsage;
}
