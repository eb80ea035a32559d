// Command-line options from a declarative table: the same table parses arguments and prints --help.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace msmon {

struct OptionSpec {
    std::string name;        // "--db"
    std::string value_name;  // "PATH"; empty for a flag
    std::string help;
    bool repeatable = false;
};

struct CommandSpec {
    std::string name;   // "ingest"; empty for a program without subcommands
    std::string usage;  // "DIR... [options]"
    std::string summary;
    std::vector<OptionSpec> options;
    std::size_t min_positional = 0;
    std::size_t max_positional = 0;  // 0 = unlimited
    std::string program = "msmon";
};

class ParsedArgs {
public:
    std::vector<std::string> positional;
    std::map<std::string, std::vector<std::string>> values;
    bool has(const std::string& name) const { return values.count(name) != 0; }
    std::optional<std::string> value(const std::string& name) const {
        auto it = values.find(name);
        if (it == values.end() || it->second.empty()) return std::nullopt;
        return it->second.back();
    }
};

// Parses argv[first..]; on a usage error returns nullopt with `error` set. Sets `help` for -h/--help.
std::optional<ParsedArgs> parse_args(const CommandSpec& spec, int argc, char** argv, int first, bool& help,
                                     std::string& error);
std::string render_help(const CommandSpec& spec);

}  // namespace msmon
