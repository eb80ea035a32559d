// Man pages and shell completions written from the same CommandSpec tables that parse the arguments and print
// --help, so the three never disagree. `msmon docs DIR` and `msmon-tui --docs DIR` write them; the build installs
// them (man1/, bash-completion/completions/, zsh/site-functions/).
#pragma once

#include <string>
#include <vector>

#include "core/args/arg_parser.hpp"

namespace msmon {

// One program: its name, one line of what it is, its commands (one spec with an empty name for a program without
// subcommands), and the version and date for the page's header.
struct ProgramDocs {
    std::string program;
    std::string tagline;
    std::string description;
    std::vector<const CommandSpec*> commands;
    // Sections after the commands: a title ("RULES") and its entries, each a term and its text.
    struct Entry {
        std::string term, text;
    };
    struct Section {
        std::string title;
        std::string lead;
        std::vector<Entry> entries;
    };
    std::vector<Section> sections;
    std::string version;
    std::string date;
};

std::string man_page(const ProgramDocs& docs);
std::string bash_completion(const ProgramDocs& docs);
std::string zsh_completion(const ProgramDocs& docs);

// Writes DIR/<program>.1, DIR/<program>.bash and DIR/_<program>; false with `error` if a file cannot be written.
bool write_program_docs(const ProgramDocs& docs, const std::string& dir, std::string& error);

}  // namespace msmon
