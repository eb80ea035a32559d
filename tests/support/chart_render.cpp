#include "tests/support/chart_render.hpp"

#include <string>

#include "tui/widgets/braille_chart.hpp"

namespace msmon::test {

RenderedChart render_chart(const std::vector<RankSeries>& series, const ChartFrame& frame) {
    std::vector<tui::ChartSeries> lines;
    for (std::size_t i = 0; i < series.size(); ++i) {
        tui::ChartSeries line;
        line.label = "r" + std::to_string(series[i].rank);
        for (const auto& p : series[i].points) line.points.push_back({p.step, p.value});
        line.faint = i > 0;
        line.style = {i > 0 ? tui::Color::series1 : tui::Color::series0, tui::Color::none,
                      static_cast<std::uint8_t>(i > 0 ? tui::kDim : tui::kBold)};
        lines.push_back(std::move(line));
    }
    tui::ChartOptions options;
    options.step_lo = frame.lo;
    options.step_hi = frame.hi;
    options.log_y = frame.log_y;
    options.cursor_step = frame.cursor;
    options.title = "chart";
    RenderedChart out;
    out.buffer = tui::ScreenBuffer(frame.width, frame.height);
    out.plot_columns =
        tui::draw_chart(out.buffer, 0, 0, frame.width, frame.height, lines, options, tui::Glyphs{frame.unicode, true});
    return out;
}

std::string first_difference(const tui::ScreenBuffer& a, const tui::ScreenBuffer& b) {
    if (a.width() != b.width() || a.height() != b.height()) return "sizes differ";
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x)
            if (!(a.at(x, y) == b.at(x, y)))
                return std::to_string(x) + "," + std::to_string(y) + ": U+" + std::to_string(a.at(x, y).ch) + " vs U+" +
                       std::to_string(b.at(x, y).ch) + "\n" + a.to_text() + "\n----\n" + b.to_text();
    return {};
}

}  // namespace msmon::test
