// Run-config page lines. Text from the event files is escaped (core/text/display_escape) before it is laid
// out.
#include "tui/views/run_config_page.hpp"

#include <algorithm>

#include "core/text/display_escape.hpp"

namespace msmon::tui {

namespace {

constexpr std::size_t kMaxEntryBytes = 4000;  // what the ingest keeps of one text summary

// Splits escaped (printable UTF-8) text into pieces of at most `columns` code points.
void wrap(const std::string& text, int columns, const std::string& indent, Style style, std::vector<PageLine>& out) {
    const std::size_t cols = static_cast<std::size_t>(std::max(8, columns));
    std::size_t start = 0, count = 0;
    for (std::size_t i = 0; i <= text.size(); ++i) {
        const bool at_char = i == text.size() || (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
        if (!at_char) continue;
        if (i == text.size() || count == cols) {
            out.push_back({indent + text.substr(start, i - start), style});
            start = i;
            count = 0;
        }
        ++count;
    }
}

}  // namespace

std::vector<PageLine> run_config_lines(const RunConfigModel& model, int width) {
    const Style head{Color::accent, Color::none, kBold};
    const Style dim{Color::dim, Color::none, kPlain};
    const Style key_style{Color::warn, Color::none, kPlain};  // a key whose text spans lines
    std::vector<PageLine> lines;
    std::size_t ranks = 0;
    for (const auto& g : model.groups) ranks += g.ranks.size();
    lines.push_back({"run config: " + std::to_string(model.entries) + " text summaries from " + std::to_string(ranks) +
                         " ranks, " + std::to_string(model.groups.size()) +
                         (model.groups.size() == 1 ? " config" : " distinct configs") + "  (c or Esc: back)",
                     head});
    if (model.groups.empty()) {
        lines.push_back(
            {"  none yet: the job's config is read from TensorBoard text summaries (events.out.tfevents.*)", dim});
        return lines;
    }
    for (const auto& g : model.groups) {
        lines.push_back({"", {}});
        const std::string who = g.ranks.size() == 1 ? "rank " + rank_ranges(g.ranks)
                                                    : "ranks " + rank_ranges(g.ranks) + " (" +
                                                          std::to_string(g.ranks.size()) + ", the same config)";
        lines.push_back({who + "  " + escape_for_display(g.source, 300), head});
        for (const auto& e : g.entries) {
            const std::string key = escape_for_display(e.key, 300);
            const std::string step = e.step && *e.step != 0 ? "  (step " + std::to_string(*e.step) + ")" : "";
            // One line per line of the text: a YAML dump keeps its shape; control bytes inside a line are
            // escaped.
            std::vector<std::string> text_lines;
            std::string_view rest = e.text;
            while (true) {
                const auto nl = rest.find('\n');
                text_lines.push_back(escape_for_display(rest.substr(0, nl), kMaxEntryBytes));
                if (nl == std::string_view::npos) break;
                rest = rest.substr(nl + 1);
            }
            while (text_lines.size() > 1 && text_lines.back().empty()) text_lines.pop_back();
            if (text_lines.size() == 1) {
                wrap(key + ": " + text_lines.front() + step, width - 2, "  ", {}, lines);
            } else {
                lines.push_back({"  " + key + ":" + step, key_style});
                for (const auto& t : text_lines) wrap(t, width - 4, "    ", {}, lines);
            }
        }
    }
    return lines;
}

}  // namespace msmon::tui
