// Health view: sections as lines; the stop banner is pinned to the top.
#include "tui/views/health_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "tui/views/run_config_page.hpp"

namespace msmon::tui {

namespace {

struct Line {
    std::string text;
    Style style;
};

std::string num(double v) {
    if (std::isnan(v)) return "nan";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

std::string last_line(const std::string& text) {
    std::string t = text;
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
    const auto nl = t.rfind('\n');
    return nl == std::string::npos ? t : t.substr(nl + 1);
}

}  // namespace

HealthView::HealthView() {
    keys_ = {
        {{'c'}, "c", "run config (what the job wrote as text summaries; c or Esc: back)", [this] {
             show_config_ = !show_config_;
             if (show_config_) health_scroll_ = std::exchange(scroll_, 0);
             else scroll_ = health_scroll_;
             return Reaction::reload;
         }},
        {{kKeyDown, 'j'}, "j/Down", "scroll down", [this] {
             ++scroll_;
             return Reaction::redraw;
         }},
        {{kKeyUp, 'k'}, "k/Up", "scroll up", [this] {
             scroll_ = std::max(0, scroll_ - 1);
             return Reaction::redraw;
         }},
        {{kKeyPageDown}, "PgDn", "scroll a page down", [this] {
             scroll_ += page_rows_;
             return Reaction::redraw;
         }},
        {{kKeyPageUp}, "PgUp", "scroll a page up", [this] {
             scroll_ = std::max(0, scroll_ - page_rows_);
             return Reaction::redraw;
         }},
        {{kKeyHome, 'g'}, "g/Home", "back to the top", [this] {
             scroll_ = 0;
             return Reaction::redraw;
         }},
        {{kKeyEscape}, "Esc", "back from the run config", [this] {
             if (!show_config_) return Reaction::none;
             show_config_ = false;
             scroll_ = health_scroll_;
             return Reaction::reload;
         }},
    };
}

void HealthView::collect(Reader& reader) {
    model_ = collect_health(reader);
    config_ = collect_run_config(reader);
}

void HealthView::draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs&) {
    page_rows_ = std::max(1, height - 1);
    if (show_config_) {
        const std::vector<PageLine> page = run_config_lines(config_, width);
        scroll_ = std::clamp(scroll_, 0, std::max(0, static_cast<int>(page.size()) - height));
        for (int i = 0; i < height && scroll_ + i < static_cast<int>(page.size()); ++i) {
            const PageLine& l = page[static_cast<std::size_t>(scroll_ + i)];
            buf.text(x, y + i, l.text, l.style, width);
        }
        return;
    }
    const Style head{Color::accent, Color::none, kBold};
    const Style bad{Color::bad, Color::none, kBold};
    const Style good{Color::good, Color::none, kPlain};
    const Style dim{Color::dim, Color::none, kPlain};
    int top = y;
    if (model_.stop) {
        const auto& e = *model_.stop;
        std::string banner = std::string(e.kind == "stop" ? "JOB STOPPED" : "ERROR") +
                             (e.step ? " at step " + std::to_string(*e.step) : "") + " (rank " + std::to_string(e.rank) +
                             "): " + last_line(e.message);
        buf.fill(x, top, width, 1, U' ', {Color::bad, Color::none, kReverse});
        buf.text(x, top, banner, {Color::bad, Color::none, static_cast<std::uint8_t>(kReverse | kBold)}, width);
        ++top;
    }
    std::vector<Line> lines;
    std::size_t unhealthy = 0;
    for (const auto& c : model_.checkpoints) unhealthy += !c.healthy;
    lines.push_back({"checkpoints: " + std::to_string(model_.checkpoints.size()) + ", " + std::to_string(unhealthy) +
                         " unhealthy" + (model_.latest_healthy ? "; RESUME = the latest healthy one" : "; none healthy yet"),
                     head});
    if (model_.checkpoints.empty()) lines.push_back({"  none recorded (health_ckpts.json not found yet)", dim});
    for (std::size_t i = 0; i < model_.checkpoints.size(); ++i) {
        const auto& c = model_.checkpoints[i];
        std::string why;
        if (!c.healthy)
            for (const auto& p : model_.embedding_norm)
                if (p.step == c.step) why = "  embedding norm " + num(p.value);
        const bool resume = model_.latest_healthy && *model_.latest_healthy == i;
        char row[320];
        // RESUME (the latest healthy checkpoint) comes before the name so that 80 columns still show it.
        std::snprintf(row, sizeof row, "  %-9s %-6s step %-6lld rank %-3d %s%s", c.healthy ? "healthy" : "UNHEALTHY",
                      resume ? "RESUME" : "", static_cast<long long>(c.step), c.rank, c.name.c_str(), why.c_str());
        lines.push_back({row, c.healthy ? (resume ? Style{Color::good, Color::none, kBold} : good) : bad});
    }
    lines.push_back({"", {}});
    if (!model_.global_norm.empty()) {
        const auto& last = model_.global_norm.back();
        double peak = -INFINITY;
        for (const auto& p : model_.global_norm) peak = std::max(peak, std::isnan(p.value) ? INFINITY : p.value);
        lines.push_back({"global norm: latest " + num(last.value) + " at step " + std::to_string(last.step) + ", max " +
                             num(peak) + "; " + std::to_string(model_.global_norm_spikes) + " spikes" +
                             (model_.spike_threshold ? " >= " + num(*model_.spike_threshold) : "") + ", " +
                             std::to_string(model_.data_skips) + " data skips",
                         model_.global_norm_spikes ? Style{Color::warn, Color::none, kBold} : Style{}});
    }
    if (!model_.embedding_norm.empty()) {
        const auto& last = model_.embedding_norm.back();
        lines.push_back({"embedding local norm: latest " + num(last.value) + " at step " + std::to_string(last.step) +
                             (model_.embedding_threshold ? ", threshold " + num(*model_.embedding_threshold) + ", " +
                                                               std::to_string(model_.embedding_high) + " steps over"
                                                         : ""),
                         model_.embedding_high ? Style{Color::warn, Color::none, kBold} : Style{}});
    }
    lines.push_back({"ranks: " + std::to_string(model_.ranks.size()), head});
    std::int64_t lead = -1;
    for (const auto& r : model_.ranks) lead = std::max(lead, r.last_step);
    for (const auto& r : model_.ranks) {
        char row[200];
        std::snprintf(row, sizeof row, "  rank %-5d last step %-7lld %s%s%s", r.rank, static_cast<long long>(r.last_step),
                      r.step_ms ? ("step " + num(*r.step_ms) + " ms").c_str() : "",
                      r.last_step < lead ? ("  behind by " + std::to_string(lead - r.last_step)).c_str() : "",
                      r.stalled ? "  STALLED" : "");
        lines.push_back({row, r.stalled ? bad : (r.last_step < lead ? Style{Color::warn, Color::none, kPlain} : Style{})});
    }
    // The same event on every rank (a data skip is logged by all) is one line with the rank count.
    struct Group {
        const EventRecord* first;
        int ranks = 0;
    };
    std::vector<Group> groups;
    std::size_t shown_events = 0;
    for (const auto& e : model_.events) {
        if (e.kind == "config") continue;  // text summaries: the run-config page (c)
        ++shown_events;
        if (!groups.empty()) {
            const EventRecord& g = *groups.back().first;
            if (g.step == e.step && g.kind == e.kind && last_line(g.message) == last_line(e.message)) {
                ++groups.back().ranks;
                continue;
            }
        }
        bool merged = false;
        for (auto& g : groups)
            if (g.first->step == e.step && g.first->kind == e.kind && last_line(g.first->message) == last_line(e.message)) {
                ++g.ranks;
                merged = true;
                break;
            }
        if (!merged) groups.push_back({&e, 1});
    }
    if (config_.entries)
        lines.push_back({"run config: " + std::to_string(config_.entries) + " keys from text summaries (c shows them)", head});
    lines.push_back({"events: " + std::to_string(shown_events), head});
    for (const auto& g : groups) {
        const EventRecord& e = *g.first;
        char row[120];
        const std::string who = g.ranks > 1 ? std::to_string(g.ranks) + " ranks" : "rank " + std::to_string(e.rank);
        std::snprintf(row, sizeof row, "  step %-6s %-8s %-18s ", e.step ? std::to_string(*e.step).c_str() : "-", who.c_str(),
                      e.kind.c_str());
        const bool alarm = e.kind == "stop" || e.kind == "error" || e.kind == "global_norm_spike" || e.kind == "data_skip";
        lines.push_back({row + last_line(e.message), alarm ? Style{Color::warn, Color::none, kPlain} : dim});
    }
    const int h = height - (top - y);
    scroll_ = std::clamp(scroll_, 0, std::max(0, static_cast<int>(lines.size()) - h));
    for (int i = 0; i < h && scroll_ + i < static_cast<int>(lines.size()); ++i) {
        const Line& l = lines[static_cast<std::size_t>(scroll_ + i)];
        buf.text(x, top + i, l.text, l.style, width);
    }
}

}  // namespace msmon::tui
