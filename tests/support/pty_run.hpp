// Running a program with a terminal as its stdout and stderr (a pseudo-terminal): what a person at that terminal
// would receive, byte for byte.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tests/support/test_env.hpp"

namespace msmon::test {

// Runs to completion (at most 60 s) with stdin, stdout and stderr on one pseudo-terminal; `out` holds every byte
// the terminal received (stdout and stderr interleaved, "\n" turned into "\r\n" by the terminal). `err` is empty.
CommandResult run_on_terminal(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {});

}  // namespace msmon::test
