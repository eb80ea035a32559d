// The table of msmon's commands (see the header).
#include "cli/command_table.hpp"

#include "cli/commands.hpp"

namespace msmon {

// Each command's entry point (argv[1] is its name; returns the exit code) and its argument table (what parses its
// arguments, prints its --help and writes its man page section), defined in its own file.
int run_ingest_command(int argc, char** argv);
int run_query_command(int argc, char** argv);
int run_simulate_command(int argc, char** argv);
int run_anomalies_command(int argc, char** argv);
int run_health_command(int argc, char** argv);
int run_config_command(int argc, char** argv);
int run_export_command(int argc, char** argv);
int run_settings_command(int argc, char** argv);
int run_docs_command(int argc, char** argv);
int run_judge_command(int argc, char** argv);

// Each command's argument table (what parses its arguments, prints its --help and writes its man page section).
const CommandSpec& anomalies_command_spec();
const CommandSpec& config_command_spec();
const CommandSpec& docs_command_spec();
const CommandSpec& export_command_spec();
const CommandSpec& health_command_spec();
const CommandSpec& ingest_command_spec();
const CommandSpec& judge_command_spec();
const CommandSpec& query_command_spec();
const CommandSpec& settings_command_spec();
const CommandSpec& simulate_command_spec();

const std::vector<CliCommand>& cli_commands() {
    // clang-format off
    static const std::vector<CliCommand> commands = {
        {ingest_command_spec,    run_ingest_command,    "DIR...",            "read msprobe monitor output into the store (--follow to keep tailing)"},
        {query_command_spec,     run_query_command,     "(DIR|--db)",        "print stored values: rank,kind,vpp_stage,name,step,micro_step,op,value"},
        {anomalies_command_spec, run_anomalies_command, "(DIR|--db)",        "msprobe's anomaly dumps and msmon's own detections, ranked"},
        {health_command_spec,    run_health_command,    "(DIR|--db)",        "checkpoint health, latest healthy checkpoint, data skips and stops"},
        {config_command_spec,    run_config_command,    "ACTION CONFIG",     "show or change msprobe's monitor config safely (enable, stop, disable, set)"},
        {export_command_spec,    run_export_command,    "(DIR|--db) --trend-db OUTDIR", "write msprobe's monitor_data.trend.db (as data2db does)"},
        {judge_command_spec,     run_judge_command,     "--store URL --job ID", "the checks that compare ranks, over every node's ranks in ClickHouse"},
        {simulate_command_spec,  run_simulate_command,  "OUTDIR",            "write a realistic msprobe run (for demos and tests)"},
        {settings_command_spec,  run_settings_command,  "",                  "msmon's own settings file: what applies, and what in it is wrong"},
        {docs_command_spec,      run_docs_command,      "DIR",               "write msmon's man page and bash/zsh completions into DIR"},
    };
    // clang-format on
    return commands;
}

const CliCommand* find_cli_command(std::string_view name) {
    for (const CliCommand& c : cli_commands())
        if (c.name() == name) return &c;
    return nullptr;
}

std::string cli_usage() {
    std::string out = "usage: msmon COMMAND [options]   (msmon COMMAND --help for each)\n\ncommands:\n";
    for (const CliCommand& c : cli_commands()) {
        std::string head = c.name() + (*c.arguments ? std::string(" ") + c.arguments : "");
        head += head.size() < 18 ? std::string(19 - head.size(), ' ') : "  ";
        out += "  " + head + c.line + "\n";
    }
    out += "\n  --version          msmon's version, the commit it was built from and the build date\n";
    return out;
}

}  // namespace msmon
