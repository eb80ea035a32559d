// The `:` commands, as data: each view's table and the app's. The same entries run a typed line and fill the
// help overlay, as key tables do for keys.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tui/key_table.hpp"

namespace msmon::tui {

struct Command {
    std::string verb;  // "rank"
    std::string args;  // "R", as shown in help; empty: takes none
    std::string help;
    // `arg` is the rest of the line, trimmed; `message` is shown in the status line (an error, or an answer).
    std::function<Reaction(const std::string& arg, std::string& message)> run;
};

using CommandTable = std::vector<Command>;

struct CommandLine {
    std::string verb, arg;
};

// "rank  3 " → {"rank", "3"}.
CommandLine split_command(const std::string& line);

// Runs the first command named `line.verb` in `tables` (in order); false if none has it.
bool run_command(const std::vector<const CommandTable*>& tables, const CommandLine& line, Reaction& reaction,
                 std::string& message);

}  // namespace msmon::tui
