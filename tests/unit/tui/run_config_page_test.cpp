// Unit tests for the Health view's run-config page: ranks as ranges, text escaped for the terminal,
// multi-line texts kept line by line, long lines wrapped to the width.
#include "tui/views/run_config_page.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace msmon::tui {
namespace {

RunConfigEntry entry(int rank, std::string key, std::string text) {
    RunConfigEntry e;
    e.rank = rank;
    e.step = 0;
    e.key = std::move(key);
    e.text = std::move(text);
    return e;
}

std::string joined(const std::vector<PageLine>& lines) {
    std::string out;
    for (const auto& l : lines) out += l.text + "\n";
    return out;
}

TEST(RunConfigPage, ranks_print_as_ranges) {
    EXPECT_EQ(rank_ranges({}), "");
    EXPECT_EQ(rank_ranges({4}), "4");
    EXPECT_EQ(rank_ranges({0, 1, 2, 3, 5, 7, 8}), "0-3,5,7-8");
}

TEST(RunConfigPage, text_from_files_is_escaped_and_multi_line_text_keeps_its_lines) {
    RunConfigModel m;
    m.entries = 2;
    RunConfigGroup g;
    g.ranks = {0, 1, 2};
    g.source = "/job/output";
    g.entries = {entry(0, "run_mode", "train\x1b[2J"),
                 entry(0, "model_config", "hidden_size: 4096\nnum_layers: 32\xe2\x80\xae\n")};
    m.groups.push_back(g);
    const std::string page = joined(run_config_lines(m, 80));
    EXPECT_EQ(page.find('\x1b'), std::string::npos) << page;
    EXPECT_EQ(page.find("\xe2\x80\xae"), std::string::npos) << page;
    EXPECT_NE(page.find("ranks 0-2 (3, the same config)  /job/output\n"), std::string::npos) << page;
    EXPECT_NE(page.find("  run_mode: train\\x1B[2J\n"), std::string::npos) << page;
    EXPECT_NE(page.find("  model_config:\n    hidden_size: 4096\n    num_layers: 32\\u{202E}\n"), std::string::npos)
        << page;
    EXPECT_EQ(page.find("num_layers: 32\\u{202E}\n    \n"), std::string::npos) << "a trailing newline adds no line";
}

TEST(RunConfigPage, long_lines_wrap_to_the_width_by_characters) {
    RunConfigModel m;
    m.entries = 1;
    RunConfigGroup g;
    g.ranks = {3};
    std::string value;
    for (int i = 0; i < 50; ++i) value += "\xc3\xa9";  // 50 two-byte characters
    g.entries = {entry(3, "k", value)};
    m.groups.push_back(g);
    const auto lines = run_config_lines(m, 22);  // 20 characters a line after the indent
    std::vector<std::string> body;
    for (const auto& l : lines)
        if (l.text.rfind("  ", 0) == 0 && l.text.find("run config") == std::string::npos) body.push_back(l.text);
    ASSERT_EQ(body.size(), 3u) << joined(lines);  // "k: " + 50 characters = 53: 20 + 20 + 13
    EXPECT_EQ(body[0].substr(0, 5), "  k: ");
    for (const auto& b : body) EXPECT_LE(b.size(), 2u + 2u * 20u) << b;  // never a character cut in two
    EXPECT_EQ(body[2].size(), 2u + 2u * 13u);
}

TEST(RunConfigPage, no_text_summaries_says_where_the_config_comes_from) {
    const std::string page = joined(run_config_lines(RunConfigModel{}, 100));
    EXPECT_NE(page.find("run config: 0 text summaries"), std::string::npos) << page;
    EXPECT_NE(page.find("TensorBoard text summaries"), std::string::npos) << page;
}

}  // namespace
}  // namespace msmon::tui
