// The msmon subcommands. Each returns the process exit code: 0 success, 1 runtime failure, 2 usage error, 128 + the
// signal for a one-shot ingest cut short (README, "Exit codes").
#pragma once

#include "core/args/arg_parser.hpp"

namespace msmon {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

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

}  // namespace msmon
