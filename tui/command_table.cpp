// Running a typed command through the command tables.
#include "tui/command_table.hpp"

namespace msmon::tui {

CommandLine split_command(const std::string& line) {
    CommandLine out;
    const auto start = line.find_first_not_of(' ');
    if (start == std::string::npos) return out;
    const auto space = line.find(' ', start);
    out.verb = line.substr(start, space == std::string::npos ? std::string::npos : space - start);
    if (space != std::string::npos) {
        out.arg = line.substr(space + 1);
        out.arg.erase(0, out.arg.find_first_not_of(' '));
        out.arg.erase(out.arg.find_last_not_of(' ') + 1);
    }
    return out;
}

bool run_command(const std::vector<const CommandTable*>& tables, const CommandLine& line, Reaction& reaction,
                 std::string& message) {
    for (const CommandTable* table : tables)
        for (const Command& c : *table)
            if (c.verb == line.verb) {
                reaction = c.run(line.arg, message);
                return true;
            }
    return false;
}

}  // namespace msmon::tui
