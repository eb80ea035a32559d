// msmon's commands, one line each: what main.cpp dispatches, the usage text, `msmon docs` (the man page and the
// completions) and the tests that go over every command all read this table. A new command is its file and one
// line in command_table.cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/args/arg_parser.hpp"

namespace msmon {

struct CliCommand {
    const CommandSpec& (*spec)();       // its argument table: name, --help, man page section
    int (*run)(int argc, char** argv);  // argv[1] is the command's name
    const char* arguments;              // as the usage line shows them: "DIR...", "(DIR|--db)"
    const char* line;                   // what it does, in one line
    const std::string& name() const { return spec().name; }
};

// Every command, in the order the usage text and the man page list them.
const std::vector<CliCommand>& cli_commands();
// The command called `name`, or null.
const CliCommand* find_cli_command(std::string_view name);
// `msmon --help`: every command's usage line, then --version.
std::string cli_usage();

}  // namespace msmon
