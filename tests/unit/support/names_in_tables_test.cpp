// Rule, tab and command names are defined once, in their tables (core/detect/rules.cpp, tui/tab_table.hpp,
// cli/command_table.cpp); code that treats one unlike another reads the table (rule_of, tab_named,
// find_cli_command). This test reads the source and fails on a comparison with one of those names as a string
// literal anywhere else: `a.rule == "Jump"`, `"overview" != name`, `.compare("ingest")`. Help text, messages and
// tests may say the names.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cli/command_table.hpp"
#include "core/detect/rules.hpp"
#include "tui/tab_table.hpp"

namespace msmon {
namespace {

namespace fs = std::filesystem;

struct Offence {
    std::string where;  // "file:line: text"
};

std::string regex_escaped(const std::string& s) {
    static const std::regex special(R"([.^$|()\[\]{}*+?\\])");
    return std::regex_replace(s, special, R"(\$&)");
}

// The comparisons with "NAME" in `text`: ==, != on either side, compare(), starts_with(), ends_with().
std::regex comparison_with(const std::set<std::string>& names) {
    std::string alternatives;
    for (const auto& n : names) alternatives += (alternatives.empty() ? "" : "|") + regex_escaped(n);
    const std::string lit = "\"(" + alternatives + ")\"";
    return std::regex("(==|!=)\\s*" + lit + "|" + lit + "\\s*(==|!=)|(compare|starts_with|ends_with)\\(\\s*" + lit +
                      "\\s*\\)");
}

// Comparisons that use a table's name for something else, each with why.
struct Allowed {
    const char* file;
    const char* text;
    const char* why;
};
const Allowed kAllowed[] = {
    {"cli/health_command.cpp", "e.kind == \"config\"", "an event's kind (the run config MindFormers logged)"},
    {"tui/views/health_view.cpp", "e.kind == \"config\"", "an event's kind (the run config MindFormers logged)"},
};

bool allowed(const std::string& file, const std::string& line) {
    for (const Allowed& a : kAllowed)
        if (file == a.file && line.find(a.text) != std::string::npos) return true;
    return false;
}

std::vector<Offence> comparisons_in(const fs::path& root, const std::vector<std::string>& folders,
                                    const std::set<std::string>& table_files, const std::regex& pattern) {
    std::vector<Offence> out;
    for (const auto& folder : folders) {
        for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
            const auto ext = entry.path().extension();
            if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
            const std::string file = fs::relative(entry.path(), root).string();
            if (table_files.count(file)) continue;
            std::ifstream in(entry.path());
            std::string line;
            for (int n = 1; std::getline(in, line); ++n)
                if (std::regex_search(line, pattern) && !allowed(file, line))
                    out.push_back({file + ":" + std::to_string(n) + ": " + line});
        }
    }
    return out;
}

std::string listed(const std::vector<Offence>& offences) {
    std::string s;
    for (const auto& o : offences) s += "\n  " + o.where;
    return s;
}

const fs::path kRoot = MSMON_SOURCE_DIR;
const std::vector<std::string> kCode = {"core", "store", "tui", "cli"};

TEST(NamesInTables, no_rule_name_is_compared_as_a_string_literal_outside_the_rule_table) {
    std::set<std::string> names;
    for (const RuleInfo& r : all_rules()) names.insert(std::string(r.name));
    ASSERT_GE(names.size(), 14u);
    const auto offences = comparisons_in(kRoot, kCode, {"core/detect/rules.cpp"}, comparison_with(names));
    EXPECT_TRUE(offences.empty()) << "compare rule_of(a) with a Rule instead:" << listed(offences);
}

TEST(NamesInTables, no_tab_or_command_name_is_compared_as_a_string_literal_outside_its_table) {
    std::set<std::string> names;
    for (const auto& t : tui::kTabs) names.insert(t.name);
    for (const CliCommand& c : cli_commands()) names.insert(c.name());
    ASSERT_GE(names.size(), 14u);  // anomalies, health and config are both
    const auto offences = comparisons_in(
        kRoot, kCode, {"tui/tab_table.hpp", "tui/tab_table.cpp", "cli/command_table.cpp"}, comparison_with(names));
    EXPECT_TRUE(offences.empty()) << "use tab_named() / find_cli_command() instead:" << listed(offences);
}

TEST(NamesInTables, the_scan_finds_each_form_of_comparison_and_passes_help_text) {
    const std::regex p = comparison_with({"Jump", "overview"});
    for (const char* hit : {R"(if (a.rule == "Jump") {)", R"(return "overview" != name;)", R"(x.compare("Jump") == 0)",
                            R"(name.starts_with( "overview" ))"})
        EXPECT_TRUE(std::regex_search(std::string(hit), p)) << hit;
    for (const char* pass : {R"(finding(Rule::Jump, "norm"))", R"("Jump: a norm x10 from its median")",
                             R"(message = "overview of the job";)", R"(a.rule = "JumpStart" == x;)"})
        EXPECT_FALSE(std::regex_search(std::string(pass), p)) << pass;
}

TEST(NamesInTables, every_rule_has_its_entry_in_the_anomalies_docs) {
    std::ifstream in(kRoot / "docs/anomalies.md");
    ASSERT_TRUE(in) << "docs/anomalies.md";
    const std::string docs((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const RuleInfo& r : all_rules()) {
        if (r.id == Rule::unknown) continue;
        EXPECT_NE(docs.find("**" + std::string(r.name) + "**"), std::string::npos)
            << r.name << " has no **" << r.name << "** entry in docs/anomalies.md";
        EXPECT_FALSE(r.summary.empty()) << r.name;
        EXPECT_FALSE(r.message.empty()) << r.name;
    }
}

}  // namespace
}  // namespace msmon
