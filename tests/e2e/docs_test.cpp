// Man pages and shell completions come from the same argument tables as --help: every option a command's --help
// lists is in its man page and completes in bash; the zsh completion is valid zsh.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>

#include "cli/command_table.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

// The options a --help text lists ("  --db PATH   ..." lines).
std::set<std::string> help_options(const std::string& help) {
    std::set<std::string> out;
    const std::regex option(R"(^  (--[a-z0-9-]+))");
    std::istringstream in(help);
    for (std::string line; std::getline(in, line);)
        if (std::smatch m; std::regex_search(line, m, option)) out.insert(m[1]);
    return out;
}

std::string roff_option(const std::string& option) {
    std::string out;
    for (char c : option) out += c == '-' ? std::string("\\-") : std::string(1, c);
    return out;
}

// What bash completes for `words` (the last one being typed) with the generated completion loaded.
std::string bash_completes(const std::string& file, const std::string& function, const std::string& words) {
    const auto r = run({"/bin/bash", "-c",
                        "source '" + file + "'; COMP_WORDS=(" + words + "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); " +
                            function + "; echo \"${COMPREPLY[*]}\""});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
}

TEST(Docs, man_pages_and_completions_list_every_option_of_every_command) {
    TempDir tmp;
    ASSERT_EQ(run({program("msmon"), "docs", tmp / "docs"}).exit_code, 0);
    ASSERT_EQ(run({program("msmon-tui"), "--docs", tmp / "docs"}).exit_code, 0);
    const std::string man = read_file(tmp / "docs/msmon.1");
    int checked = 0;
    for (const CliCommand& c : cli_commands()) {  // every command, from the table main.cpp dispatches by
        const std::string& command = c.name();
        const auto help = run({program("msmon"), command, "--help"});
        ASSERT_EQ(help.exit_code, 0) << command;
        EXPECT_NE(man.find(".SS \"msmon " + command + "\""), std::string::npos) << command;
        for (const std::string& option : help_options(help.out)) {
            EXPECT_NE(man.find(".B " + roff_option(option)), std::string::npos) << command << " " << option;
            if (option == "--help") continue;
            const std::string typed = option.substr(0, option.size() - 1);  // all but its last letter
            const std::string offered =
                bash_completes(tmp / "docs/msmon.bash", "_msmon", "msmon " + command + " " + typed);
            EXPECT_NE((" " + offered).find(" " + option), std::string::npos)
                << command << " " << typed << ": " << offered;
            ++checked;
        }
    }
    EXPECT_GT(checked, 60);
    EXPECT_EQ(bash_completes(tmp / "docs/msmon.bash", "_msmon", "msmon he"), "health\n");

    const std::string tui_man = read_file(tmp / "docs/msmon-tui.1");
    const auto tui_help = run({program("msmon-tui"), "--help"});
    for (const std::string& option : help_options(tui_help.out)) {
        EXPECT_NE(tui_man.find(".B " + roff_option(option)), std::string::npos) << option;
    }
    EXPECT_NE(bash_completes(tmp / "docs/msmon-tui.bash", "_msmon_tui", "msmon-tui --basel").find("--baseline"),
              std::string::npos);
    // man renders it (when man is installed), with the NAME line a person reads.
    if (std::filesystem::exists("/usr/bin/man")) {
        const auto shown =
            run({"/usr/bin/man", "-l", tmp / "docs/msmon.1"}, {{"MANWIDTH", "100"}, {"MANPAGER", "cat"}});
        EXPECT_NE(shown.out.find("msmon - monitor large-model training"), std::string::npos) << shown.out << shown.err;
    }
    if (!std::filesystem::exists("/usr/bin/zsh"))
        MSMON_SKIP_UNLESS_REQUIRED("zsh is not installed: its completions not checked");
    EXPECT_EQ(run({"/usr/bin/zsh", "-n", tmp / "docs/_msmon"}).exit_code, 0);
    EXPECT_EQ(run({"/usr/bin/zsh", "-n", tmp / "docs/_msmon-tui"}).exit_code, 0);
}

}  // namespace
}  // namespace msmon::test
