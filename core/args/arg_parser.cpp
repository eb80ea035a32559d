// Table-driven option parsing: "--opt VALUE" and "--opt=VALUE"; anything unknown is a usage error.
#include "core/args/arg_parser.hpp"

namespace msmon {

namespace {

std::string command_of(const CommandSpec& spec) {
    return spec.name.empty() ? spec.program : spec.program + " " + spec.name;
}

}  // namespace

std::optional<ParsedArgs> parse_args(const CommandSpec& spec, int argc, char** argv, int first, bool& help,
                                     std::string& error) {
    ParsedArgs out;
    help = false;
    for (int i = first; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            help = true;
            return out;
        }
        if (arg.size() > 2 && arg.rfind("--", 0) == 0) {
            std::string name = arg, inline_value;
            bool has_inline = false;
            if (auto eq = arg.find('='); eq != std::string::npos) {
                name = arg.substr(0, eq);
                inline_value = arg.substr(eq + 1);
                has_inline = true;
            }
            const OptionSpec* opt = nullptr;
            for (const auto& o : spec.options)
                if (o.name == name) opt = &o;
            if (!opt) {
                error = "unknown option '" + name + "'";
                return std::nullopt;
            }
            if (opt->value_name.empty()) {
                if (has_inline) {
                    error = name + " takes no value";
                    return std::nullopt;
                }
                out.values[name];
                continue;
            }
            std::string value;
            if (has_inline) {
                value = inline_value;
            } else if (i + 1 < argc) {
                value = argv[++i];
            } else {
                error = name + " needs a value (" + opt->value_name + ")";
                return std::nullopt;
            }
            auto& slot = out.values[name];
            if (!slot.empty() && !opt->repeatable) {
                error = name + " given twice";
                return std::nullopt;
            }
            slot.push_back(value);
            continue;
        }
        out.positional.push_back(arg);
    }
    if (out.positional.size() < spec.min_positional) {
        error = "missing arguments: " + command_of(spec) + " " + spec.usage;
        return std::nullopt;
    }
    if (spec.max_positional > 0 && out.positional.size() > spec.max_positional) {
        error = "too many arguments: " + command_of(spec) + " " + spec.usage;
        return std::nullopt;
    }
    return out;
}

std::string render_help(const CommandSpec& spec) {
    std::string out = "usage: " + command_of(spec) + " " + spec.usage + "\n\n" + spec.summary + "\n";
    if (!spec.options.empty()) out += "\noptions:\n";
    for (const auto& o : spec.options) {
        std::string left = "  " + o.name + (o.value_name.empty() ? "" : " " + o.value_name);
        if (left.size() < 26) left.resize(26, ' ');
        else left += "\n" + std::string(26, ' ');
        std::string help = o.help;  // continuation lines under the first
        for (std::size_t nl = help.find('\n'); nl != std::string::npos; nl = help.find('\n', nl + 1))
            help.insert(nl + 1, std::string(26, ' '));
        out += left + help + "\n";
    }
    out += "  -h, --help              this help\n";
    return out;
}

}  // namespace msmon
