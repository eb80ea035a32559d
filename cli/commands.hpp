// The exit codes of msmon's commands (their entry points are declared beside their table, cli/command_table.cpp): 0
// success, 1 runtime failure, 2 usage error, 128 + the signal for a one-shot ingest cut short (README, "Exit codes").
#pragma once

#include "core/args/arg_parser.hpp"

namespace msmon {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

}  // namespace msmon
