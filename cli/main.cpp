// msmon: the headless engine. Its commands are the table in cli/command_table.cpp.
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/command_table.hpp"
#include "cli/commands.hpp"
#include "core/config/msmon_settings.hpp"
#include "core/ingest/allocator_policy.hpp"
#include "core/log/logging.hpp"
#include "core/text/display_escape.hpp"
#include "core/version/build_info.hpp"

int main(int argc, char** argv) {
    msmon::return_large_blocks_to_the_os();
    if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
        std::fputs(msmon::cli_usage().c_str(), argc < 2 ? stderr : stdout);
        return argc < 2 ? msmon::kExitUsage : msmon::kExitOk;
    }
    const std::string cmd = argv[1];
    if (cmd == "--version" || cmd == "version") {
        std::printf("%s\n", msmon::version_line("msmon").c_str());
        return msmon::kExitOk;
    }
    msmon::init_logging("msmon", true);
    try {
        // The bounds on what is read, from msmon's settings (what is wrong in them is said by the commands that
        // use the rest: ingest, settings).
        msmon::set_input_limits(msmon::load_settings().settings.limits);
        if (const msmon::CliCommand* c = msmon::find_cli_command(cmd)) return c->run(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "msmon %s: %s\n", msmon::escape_for_terminal(cmd).c_str(),
                     msmon::escape_for_terminal(e.what()).c_str());
        return msmon::kExitFailure;
    }
    std::fprintf(stderr, "msmon: unknown command '%s'\n%s", msmon::escape_for_terminal(cmd).c_str(),
                 msmon::cli_usage().c_str());
    return msmon::kExitUsage;
}
