// Health view: sections as lines; the stop banner is pinned to the top.
#include "tui/views/health_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "core/parse/job_threshold_text.hpp"
#include "core/text/counted.hpp"
#include "core/text/display_escape.hpp"
#include "tui/tab_table.hpp"
#include "tui/views/run_config_page.hpp"
#include "tui/views/view_deps.hpp"
#include "tui/widgets/text_wrap.hpp"

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

// Each of `keys` the checks were judged with, and whose it is (a flag, the job's, MindFormers' default).
void threshold_lines(std::vector<Line>& lines, const std::vector<ThresholdUse>& uses,
                     std::initializer_list<const char*> keys) {
    const Style dim{Color::dim, Color::none, kPlain};
    for (const char* key : keys)
        for (const auto& u : uses) {
            if (u.key != key) continue;
            const std::string value = u.value ? num(*u.value) : "none";
            const std::string what = u.key == kSpikeThresholdKey        ? "  spike threshold " + value
                                     : u.key == kSpikeCountThresholdKey ? "  stop after " + value + " in a row"
                                                                        : "  threshold " + value;
            lines.push_back({u.value ? what + ": " + u.source : "  " + u.source, dim});
        }
}

}  // namespace

HealthView::HealthView() {
    // One binding per line reads as a table.
    // clang-format off
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
    };
    // clang-format on
}

bool HealthView::back() {
    if (!show_config_) return false;
    show_config_ = false;
    scroll_ = health_scroll_;
    return true;
}

void HealthView::collect(Reader& reader) {
    model_ = collect_health(reader, &model_);
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
                             (e.step ? " at step " + std::to_string(*e.step) : "") + " (rank " +
                             std::to_string(e.rank) + "): " + last_line(e.message);
        buf.fill(x, top, width, 1, U' ', {Color::bad, Color::none, kReverse});
        buf.text(x, top, banner, {Color::bad, Color::none, static_cast<std::uint8_t>(kReverse | kBold)}, width);
        ++top;
    }
    std::vector<Line> lines;
    std::size_t unhealthy = 0;
    for (const auto& c : model_.checkpoints) unhealthy += !c.healthy;
    lines.push_back({"checkpoints: " + std::to_string(model_.checkpoints.size()) + ", " + std::to_string(unhealthy) +
                         " unhealthy" +
                         (model_.latest_healthy ? "; RESUME = the latest healthy one" : "; none healthy yet"),
                     head});
    // A fixed number of lines, however many checkpoints there are: a checkpoint arriving does not move the sections
    // below while someone reads them. The latest ones, and RESUME's even when it is older.
    constexpr std::size_t kCheckpointRows = 4;
    const std::size_t n = model_.checkpoints.size();
    std::vector<std::size_t> shown;
    for (std::size_t i = n > kCheckpointRows ? n - kCheckpointRows : 0; i < n; ++i) shown.push_back(i);
    if (model_.latest_healthy && n > kCheckpointRows && *model_.latest_healthy < n - kCheckpointRows)
        shown.front() = *model_.latest_healthy;
    if (model_.checkpoints.empty())
        lines.push_back(model_.checkpoints_unread.empty()
                            ? Line{"  none recorded (health_ckpts.json not found yet)", dim}
                            : Line{"  none read: " + escape_for_display(model_.checkpoints_unread, 400),
                                   {Color::bad, Color::none, kPlain}});
    for (const std::size_t i : shown) {
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
    if (n > shown.size())
        lines.push_back({"  ... " + std::to_string(n - shown.size()) + " more (msmon health lists every one)", dim});
    while (lines.size() < 2 + kCheckpointRows) lines.push_back({"", {}});
    lines.push_back({"", {}});
    if (!model_.global_norm.empty()) {
        const auto& last = model_.global_norm.back();
        // The max of the finite values; NaN or Inf steps are said apart (a NaN is not a larger norm).
        double peak = -INFINITY;
        std::optional<std::int64_t> first_bad;
        std::size_t bad_steps = 0;
        for (const auto& p : model_.global_norm) {
            if (std::isfinite(p.value)) {
                peak = std::max(peak, p.value);
            } else {
                if (!first_bad) first_bad = p.step;
                ++bad_steps;
            }
        }
        const std::size_t spikes = model_.spike_steps.size(), skips = model_.data_skip_steps.size();
        std::string text = "global norm: latest " + num(last.value) + " at step " + std::to_string(last.step);
        if (peak > -INFINITY) text += ", max " + num(peak);
        if (first_bad)
            text += "; not finite at " + std::to_string(bad_steps) + (bad_steps == 1 ? " step" : " steps") +
                    ", from step " + std::to_string(*first_bad);
        lines.push_back({text, first_bad ? Style{Color::bad, Color::none, kBold} : Style{}});
        std::string spike_text = "  spikes" +
                                 (model_.spike_threshold ? " >= " + num(*model_.spike_threshold) : std::string()) +
                                 " at " + std::to_string(spikes) + (spikes == 1 ? " step" : " steps");
        if (spikes)
            spike_text += " on " + std::to_string(model_.spike_ranks.size()) +
                          (model_.spike_ranks.size() == 1 ? " rank" : " ranks");
        spike_text += "; data skipped at " + std::to_string(skips) + (skips == 1 ? " step" : " steps");
        lines.push_back({spike_text, spikes || skips ? Style{Color::warn, Color::none, kBold} : Style{}});
        threshold_lines(lines, model_.thresholds, {kSpikeThresholdKey, kSpikeCountThresholdKey});
    }
    if (!model_.embedding_norm.empty()) {
        const auto& last = model_.embedding_norm.back();
        lines.push_back(
            {"embedding local norm: latest " + num(last.value) + " at step " + std::to_string(last.step) +
                 (model_.embedding_threshold ? ", threshold " + num(*model_.embedding_threshold) + ", " +
                                                   counted(model_.embedding_high_steps.size(), "step") + " over"
                                             : ""),
             !model_.embedding_high_steps.empty() ? Style{Color::warn, Color::none, kBold} : Style{}});
        threshold_lines(lines, model_.thresholds, {kEmbeddingThresholdKey});
    }
    if (!model_.restarts.empty()) {
        lines.push_back({"restarts: " + std::to_string(model_.restarts.size()), head});
        for (const Restart& r : model_.restarts)
            lines.push_back(
                {"  " + describe_restart(r, model_.checkpoints),
                 r.resumed_at <= r.reached && !r.from_log ? Style{Color::warn, Color::none, kPlain} : Style{}});
    }
    lines.push_back({"ranks: " + std::to_string(model_.ranks.size()), head});
    std::int64_t lead = -1;
    for (const auto& r : model_.ranks) lead = std::max(lead, r.last_step);
    for (const auto& r : model_.ranks) {
        char row[200];
        std::snprintf(row, sizeof row, "  rank %-5d last step %-7lld %s%s%s", r.rank,
                      static_cast<long long>(r.last_step), r.step_ms ? ("step " + num(*r.step_ms) + " ms").c_str() : "",
                      r.last_step < lead ? ("  behind by " + std::to_string(lead - r.last_step)).c_str() : "",
                      r.stalled ? "  STALLED" : "");
        lines.push_back(
            {row, r.stalled ? bad : (r.last_step < lead ? Style{Color::warn, Color::none, kPlain} : Style{})});
    }
    // The same event on every rank (a data skip is logged by all; a checkpoint save by all, each with its own
    // seconds) is one line with the count of ranks: same step, kind and message up to its numbers.
    struct Group {
        const EventRecord* first;
        std::set<int> ranks;
        std::set<std::pair<int, std::string>> logged;  // (rank, time): a line in info.log and worker_N.log is one
    };
    const auto shape_of = [](const EventRecord& e) {
        std::string out = last_line(e.message);
        for (char& c : out)
            if (c >= '0' && c <= '9') c = '#';
        return out;
    };
    std::vector<Group> groups;
    std::map<std::tuple<std::optional<std::int64_t>, std::string, std::string>, std::size_t> group_of;
    std::size_t shown_events = 0;
    for (const auto& e : model_.events) {
        if (e.kind == "config") continue;  // text summaries: the run-config page (c)
        ++shown_events;
        auto [it, fresh] = group_of.try_emplace({e.step, e.kind, shape_of(e)}, groups.size());
        if (fresh) groups.push_back({&e, {}, {}});
        Group& g = groups[it->second];
        g.ranks.insert(e.rank);
        g.logged.insert({e.rank, e.time});
    }
    if (config_.entries) {
        // Keys, not entries: 4 keys written by 16 runs are 4 keys.
        std::set<std::string> keys;
        std::set<int> ranks;
        for (const auto& g : config_.groups) {
            for (const auto& e : g.entries) keys.insert(e.key);
            ranks.insert(g.ranks.begin(), g.ranks.end());
        }
        std::string text = "run config: " + counted(keys.size(), "key") + " from text summaries, ";
        text += config_.groups.size() == 1
                    ? "the same on " + std::to_string(ranks.size()) + (ranks.size() == 1 ? " rank" : " ranks")
                    : std::to_string(config_.groups.size()) + " different configs over " +
                          std::to_string(ranks.size()) + " ranks";
        lines.push_back(
            {text + " (c shows them)", config_.groups.size() > 1 ? Style{Color::warn, Color::none, kBold} : head});
    }
    lines.push_back({"events: " + std::to_string(shown_events), head});
    for (const auto& g : groups) {
        const EventRecord& e = *g.first;
        char row[160];
        // More events than ranks: a relaunch logged it again (8 ranks x2), not 16 ranks.
        std::string who =
            g.ranks.size() > 1 ? std::to_string(g.ranks.size()) + " ranks" : "rank " + std::to_string(e.rank);
        if (g.logged.size() > g.ranks.size() && g.logged.size() % g.ranks.size() == 0)
            who += " x" + std::to_string(g.logged.size() / g.ranks.size());
        std::snprintf(row, sizeof row, "  step %-6s %-11s %-18s ", e.step ? std::to_string(*e.step).c_str() : "-",
                      who.c_str(), e.kind.c_str());
        const bool alarm =
            e.kind == "stop" || e.kind == "error" || e.kind == "global_norm_spike" || e.kind == "data_skip";
        lines.push_back({row + last_line(e.message), alarm ? Style{Color::warn, Color::none, kPlain} : dim});
    }
    // Last: what the checks across ranks can see, below what changes as the job runs.
    if (!model_.checks.replicas.empty() || !model_.checks.cannot_run.empty()) {
        const std::string groups = model_.checks.summary();
        lines.push_back({"checks across ranks: " +
                             (groups.empty() ? std::string("no replica groups") : groups + " (replica groups)"),
                         head});
        for (const auto& why : model_.checks.cannot_run)  // wrapped: the fix is at the end of the sentence
            for (const auto& part : wrap_text(why, std::max(20, width - 4))) lines.push_back({"  " + part, dim});
    }
    const int h = height - (top - y);
    scroll_ = std::clamp(scroll_, 0, std::max(0, static_cast<int>(lines.size()) - h));
    for (int i = 0; i < h && scroll_ + i < static_cast<int>(lines.size()); ++i) {
        const Line& l = lines[static_cast<std::size_t>(scroll_ + i)];
        buf.text(x, top + i, l.text, l.style, width);
    }
}

std::unique_ptr<View> make_health_view(ViewDeps&) {
    return std::make_unique<HealthView>();
}

}  // namespace msmon::tui
