// msmon docs DIR: writes msmon's man page and its bash and zsh completions from the commands' argument tables.
#include <cstdio>

#include "cli/command_table.hpp"
#include "cli/commands.hpp"
#include "core/args/command_docs.hpp"
#include "core/detect/rules.hpp"
#include "core/text/display_escape.hpp"
#include "core/version/build_info.hpp"

namespace msmon {

namespace {

const CommandSpec kDocsSpec{
    "docs",
    "DIR",
    "Writes DIR/msmon.1 (the man page), DIR/msmon.bash and DIR/_msmon (bash and zsh completions), all from the\n"
    "same tables as every command's --help. `cmake --install` installs them; msmon-tui --docs DIR writes its own.",
    {},
    1,
    1,
};

}  // namespace

const CommandSpec& docs_command_spec() {
    return kDocsSpec;
}

int run_docs_command(int argc, char** argv) {
    bool help = false;
    std::string error;
    const auto args = parse_args(kDocsSpec, argc, argv, 2, help, error);
    if (help) {
        std::fputs(render_help(kDocsSpec).c_str(), stdout);
        return kExitOk;
    }
    if (!args) {
        std::fprintf(stderr, "msmon docs: %s\n", escape_for_terminal(error).c_str());
        return kExitUsage;
    }
    ProgramDocs d;
    d.program = "msmon";
    d.tagline = "monitor large-model training: msprobe and MindFormers output, headless";
    d.description =
        "msmon reads what msprobe's training monitor (TrainerMon) and MindSpore Transformers write for every rank "
        "(per-rank CSV statistics of gradients, activations, optimizer state and weights, anomaly dumps, loss and "
        "global-norm log lines, checkpoint health) into an SQLite store, finds anomalies, and answers queries. "
        "msmon-tui(1) shows the same live in a terminal.";
    for (const CliCommand& c : cli_commands()) d.commands.push_back(&c.spec());
    ProgramDocs::Section rules{
        "RULES",
        "The rules anomalies are found by, named as msmon anomalies prints them: what each finds "
        "and the form of its message (docs/anomalies.md says how each judges and scores).",
        {}};
    for (const RuleInfo& r : all_rules())
        if (r.id != Rule::unknown)
            rules.entries.push_back(
                {std::string(r.name), std::string(r.summary) + ". Message: " + std::string(r.message)});
    d.sections.push_back(std::move(rules));
    d.version = build_info().version;
    d.date = build_info().date;
    if (!write_program_docs(d, args->positional[0], error)) {
        std::fprintf(stderr, "msmon docs: %s\n", escape_for_terminal(error).c_str());
        return kExitFailure;
    }
    return kExitOk;
}

}  // namespace msmon
