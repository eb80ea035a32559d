// The msmon subcommands. Each returns the process exit code: 0 success, 1 runtime failure, 2 usage error.
#pragma once

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

}  // namespace msmon
