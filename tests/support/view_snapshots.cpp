// Snapshot frames of the views: see view_snapshots.hpp.
#include "tests/support/view_snapshots.hpp"

#include "tests/support/e2e_support.hpp"
#include "tui/tab_table.hpp"

namespace msmon::test {

std::map<std::string, std::string> snapshot_env(const TempDir& tmp, const std::string& locale) {
    auto env = isolated_env(tmp);
    env["LANG"] = locale;
    env["LC_ALL"] = locale;
    return env;
}

CommandResult view_snapshot(const TempDir& tmp, const std::string& db, const std::string& config,
                            const std::string& view, const std::string& size, const std::string& locale) {
    std::vector<std::string> argv = {program("msmon-tui"), "--db", db};
    if (!config.empty()) argv.insert(argv.end(), {"--config", config});
    argv.insert(argv.end(), {"--snapshot", view, "--size", size});
    return run(argv, snapshot_env(tmp, locale));
}

std::vector<std::u32string> frame_cells(const std::string& text) {
    std::vector<std::u32string> lines(1);
    for (std::size_t i = 0; i < text.size();) {
        const auto b0 = static_cast<unsigned char>(text[i]);
        if (b0 == '\n') {
            lines.emplace_back();
            ++i;
            continue;
        }
        const std::size_t len = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 1;
        char32_t cp = len == 1 ? b0 : len == 2 ? (b0 & 0x1F) : len == 3 ? (b0 & 0x0F) : (b0 & 0x07);
        for (std::size_t k = 1; k < len && i + k < text.size(); ++k)
            cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
        lines.back().push_back(cp);
        i += len;
    }
    if (!lines.empty() && lines.back().empty()) lines.pop_back();  // the newline after the last row
    return lines;
}

std::vector<std::string> view_names() {
    std::vector<std::string> out;
    for (const auto& tab : tui::kTabs) out.emplace_back(tab.name);
    return out;
}

}  // namespace msmon::test
