// Frame composition and key handling; no terminal I/O here (tui/terminal.cpp does that).
#include "tui/app.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <regex>

#include "core/text/number_text.hpp"
#include "tui/terminal.hpp"
#include "tui/views/anomalies_view.hpp"
#include "tui/views/chart_view.hpp"
#include "tui/views/config_view.hpp"
#include "tui/views/expert_load_view.hpp"
#include "tui/views/health_view.hpp"
#include "tui/views/overview_view.hpp"

namespace msmon::tui {

namespace {

constexpr std::size_t kOverview = 0, kChart = 1;  // the order of views_

}  // namespace

App::App(std::unique_ptr<Reader> reader, const std::string& config_path) : reader_(std::move(reader)) {
    auto open_chart = [this] { show(kChart); };
    views_.push_back(std::make_unique<OverviewView>(shared_, incidents_, open_chart));
    views_.push_back(std::make_unique<ChartView>(shared_));
    views_.push_back(std::make_unique<AnomaliesView>(shared_, incidents_, open_chart));
    views_.push_back(std::make_unique<HealthView>());
    views_.push_back(std::make_unique<ConfigView>(config_path.empty() ? nullptr : std::make_unique<ConfigEditor>(config_path)));
    views_.push_back(std::make_unique<ExpertLoadView>());
    global_keys_ = {
        {{'q'}, "q", "quit", [this] {
             quit_ = true;
             return Reaction::none;
         }},
        {{'?'}, "?", "this help", [this] {
             help_ = !help_;
             return Reaction::redraw;
         }},
        {{'1', '2', '3', '4', '5', '6'}, "1-6", "switch tab", [] { return Reaction::none; }},  // handled with the digit
        {{kKeyTab}, "Tab", "next tab", [this] {
             show((current_ + 1) % views_.size());
             return Reaction::reload;
         }},
        {{kKeyBackTab}, "S-Tab", "previous tab", [this] {
             show((current_ + views_.size() - 1) % views_.size());
             return Reaction::reload;
         }},
        {{'/'}, "/", "filter parameter names (regex; empty clears)", [this] {
             input_ = Input::filter;
             input_text_ = shared_.chart_series().name_regex.value_or("");
             return Reaction::redraw;
         }},
        {{':'}, ":", "command: kind K, op O, rank R, step S, quit; in Anomalies: rule R, rank R, kind K, steps A-B, source S", [this] {
             input_ = Input::command;
             input_text_.clear();
             return Reaction::redraw;
         }},
    };
}

App::~App() = default;

bool App::select_view(const std::string& name) {
    for (std::size_t i = 0; i < views_.size(); ++i) {
        std::string t = views_[i]->title();
        std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (t == name) {
            show(i);
            return true;
        }
    }
    return false;
}

void App::show(std::size_t view) {
    if (view == kChart && current_ != kChart) return_to_ = current_;
    if (current_ == kChart && view != kChart) shared_.drill.reset();
    current_ = view;
}

void App::collect() {
    views_[current_]->collect(*reader_);
    // The status line's ranks, steps and incidents (the Overview updates the index). The Overview's collect never
    // moves its selection, so this cannot take the chart off the rank it was opened on.
    if (current_ != kOverview) views_[kOverview]->collect(*reader_);
}

const OverviewView& App::overview() const { return static_cast<const OverviewView&>(*views_[kOverview]); }

std::optional<int> App::existing_rank(const std::string& text, std::string& error) const {
    const auto n = parse_int(text);
    if (!n || *n < 0 || *n > std::numeric_limits<int>::max()) {
        error = "not a rank: " + text;
        return std::nullopt;
    }
    const auto& ranks = overview().model().catalog.ranks;
    if (std::find(ranks.begin(), ranks.end(), *n) != ranks.end()) return static_cast<int>(*n);
    const auto [lo, hi] = std::minmax_element(ranks.begin(), ranks.end());
    error = "no rank " + text + (ranks.empty() ? std::string(": no ranks yet")
                                               : " (" + std::to_string(ranks.size()) + " ranks, " + std::to_string(*lo) +
                                                     "-" + std::to_string(*hi) + ")");
    return std::nullopt;
}

Reaction App::run_command(const std::string& command) {
    const auto space = command.find(' ');
    const std::string verb = command.substr(0, space);
    std::string arg = space == std::string::npos ? "" : command.substr(space + 1);
    arg.erase(0, arg.find_first_not_of(' '));  // ":rank  2 " is rank 2
    arg.erase(arg.find_last_not_of(' ') + 1);
    std::string error;
    // A rank is checked before any view takes it (the chart's focus, the Anomalies filter): one that does not exist
    // is said so, instead of landing on another.
    std::optional<int> rank;
    if (verb == "rank" && !arg.empty() && !(rank = existing_rank(arg, error))) {
        message_ = error;
        return Reaction::redraw;
    }
    if (views_[current_]->command(verb, arg, error)) {
        message_ = error;
        return Reaction::reload;  // a view the store pages (the Anomalies table) reads its rows again
    }
    if (verb == "q" || verb == "quit") {
        quit_ = true;
        return Reaction::none;
    }
    // Typed in a drill-down's chart these change the drill-down's statistic; elsewhere, the Overview's.
    if (verb == "kind" && !arg.empty()) {
        shared_.chart_series().kind = arg;
        return Reaction::reload;
    }
    if (verb == "op" && !arg.empty()) {
        shared_.chart_series().op = arg;
        return Reaction::reload;
    }
    if (rank) {
        shared_.chart_rank() = *rank;
        show(kChart);
        return Reaction::reload;
    }
    if (verb == "step" && !arg.empty()) {
        const auto step = parse_int(arg);
        if (!step) {
            message_ = "not a step: " + arg;
            return Reaction::redraw;
        }
        shared_.focus_step = *step;
        show(kChart);
        return Reaction::reload;
    }
    if (verb == "help") {
        help_ = true;
        return Reaction::redraw;
    }
    message_ = "unknown command: " + command;
    return Reaction::redraw;
}

bool App::handle_key(int key, int mouse_x, int mouse_y, bool& reload, bool& redraw) {
    if (key == kKeyResize) {
        redraw = true;
        return true;
    }
    if (!message_.empty() && input_ == Input::none) {  // a message stays until the next key
        message_.clear();
        redraw = true;
    }
    if (input_ != Input::none) {
        if (key == kKeyEscape) {
            input_ = Input::none;
        } else if (key == kKeyEnter) {
            const Input what = input_;
            input_ = Input::none;
            if (what == Input::filter) {
                std::optional<std::string> regex;
                bool valid = true;
                if (!input_text_.empty()) {
                    try {
                        std::regex test(input_text_);
                        regex = input_text_;
                    } catch (const std::regex_error&) {
                        message_ = "not a valid regular expression: " + input_text_;
                        valid = false;
                    }
                }
                if (valid && !views_[current_]->set_filter(regex)) shared_.chart_series().name_regex = regex;
                reload = true;
            } else {
                const Reaction r = run_command(input_text_);
                reload = reload || r == Reaction::reload;
            }
        } else if (key == kKeyBackspace) {
            if (!input_text_.empty()) input_text_.pop_back();
        } else if (key >= 32 && key < 0x110000 && key != 127) {
            if (key < 0x80) input_text_.push_back(static_cast<char>(key));
        }
        redraw = true;
        return !quit_;
    }
    if (Reaction captured = Reaction::none; views_[current_]->capture_key(key, captured)) {
        reload = reload || captured == Reaction::reload;
        redraw = true;
        return true;
    }
    if (help_ && key != '?' && key != 'q') {
        help_ = false;
        redraw = true;
        return true;
    }
    if (key >= '1' && key <= '6' && static_cast<std::size_t>(key - '1') < views_.size()) {
        show(static_cast<std::size_t>(key - '1'));
        reload = redraw = true;
        return true;
    }
    if (key == kKeyMouseClick) {
        if (mouse_y == 0) {  // tab row
            int x = 0;
            for (std::size_t i = 0; i < views_.size(); ++i) {
                const int w = static_cast<int>(std::string(views_[i]->title()).size()) + 5;
                if (mouse_x >= x && mouse_x < x + w) {
                    show(i);
                    reload = redraw = true;
                }
                x += w;
            }
            return true;
        }
        const Reaction r = views_[current_]->click(mouse_x, mouse_y);
        redraw = r != Reaction::none;
        return true;
    }
    if (key == kKeyWheelDown) key = kKeyDown;
    if (key == kKeyWheelUp) key = kKeyUp;
    Reaction r = Reaction::none;
    if (!dispatch(views_[current_]->keys(), key, r)) dispatch(global_keys_, key, r);
    if (key == kKeyEscape && current_ == kChart) {  // back from the chart to where it was opened from
        show(return_to_ == kChart ? kOverview : return_to_);
        r = Reaction::reload;
    }
    reload = reload || r == Reaction::reload;
    redraw = redraw || r != Reaction::none || reload;
    return !quit_;
}

namespace {

std::string key_hint(const KeyTable& table, std::size_t max) {
    std::string out;
    for (std::size_t i = 0; i < table.size() && i < max; ++i) {
        std::string help = table[i].help;
        if (const auto cut = help.find_first_of("(,;"); cut != std::string::npos) help = help.substr(0, cut);
        while (!help.empty() && help.back() == ' ') help.pop_back();
        out += table[i].label + " " + help + "  ";
    }
    return out;
}

}  // namespace

void App::compose(ScreenBuffer& buf, const Glyphs& glyphs) {
    buf.clear();
    const int w = buf.width(), h = buf.height();
    int x = 0;
    for (std::size_t i = 0; i < views_.size(); ++i) {
        const std::string tab = " " + std::to_string(i + 1) + " " + views_[i]->title() + " ";
        const Style s = i == current_ ? Style{Color::accent, Color::none, static_cast<std::uint8_t>(kReverse | kBold)}
                                      : Style{Color::dim, Color::none, kPlain};
        x += buf.text(x, 0, tab, s, w - x) + 1;
    }
    const int body_h = std::max(0, h - 3);
    views_[current_]->draw(buf, 0, 1, w, body_h, glyphs);
    // Hint bar: the view's first keys, then the global ones — from the same tables that dispatch.
    const Style hint{Color::dim, Color::none, kPlain};
    if (input_ != Input::none) {
        buf.text(0, h - 2, (input_ == Input::filter ? "/" : ":") + input_text_ + "_", {Color::accent, Color::none, kBold}, w);
    } else {
        buf.text(0, h - 2, key_hint(views_[current_]->keys(), 4) + "? help  q quit", hint, w);
    }
    const OverviewModel& om = overview().model();
    const std::string steps = om.catalog.max_step >= om.catalog.min_step
                                  ? std::to_string(om.catalog.min_step) + "-" + std::to_string(om.catalog.max_step)
                                  : std::string("-");
    // Numbers first, the folder last: at 80 columns the path is what gets cut. The answer to a command goes before
    // them all: it is what the person is looking for, and it lasts one key.
    char status[640];
    const std::string ckpts =
        om.unhealthy_checkpoints ? " | " + std::to_string(om.unhealthy_checkpoints) + " unhealthy ckpts" : std::string();
    // Incidents, not anomalies: one NaN is dozens of anomalies and one incident. Too many to group: the count.
    const std::size_t n_incidents = incidents_.incidents().size();
    const std::string events = incidents_.over_limit() ? std::to_string(incidents_.total()) + " anomalies, not grouped"
                                                       : std::to_string(n_incidents) + (n_incidents == 1 ? " incident" : " incidents");
    std::snprintf(status, sizeof status, " %s%zu ranks | steps %s | %s%s | %.0f values/s | %s%s | %llu malformed | %s%s%s",
                  message_.empty() ? "" : (message_ + " | ").c_str(), om.catalog.ranks.size(), steps.c_str(),
                  status_.watch.c_str(),
                  status_.seconds_since_data < 0
                      ? ""
                      : (", data " + std::to_string(static_cast<long long>(status_.seconds_since_data)) + "s ago").c_str(),
                  status_.values_per_second, events.c_str(), ckpts.c_str(), static_cast<unsigned long long>(status_.malformed),
                  status_.notice.empty() ? "" : (status_.notice + " | ").c_str(), status_.source.c_str(), "");
    buf.fill(0, h - 1, w, 1, U' ', {Color::none, Color::none, kReverse});
    buf.text(0, h - 1, status, {Color::none, Color::none, kReverse}, w);
    if (help_) draw_help(buf, glyphs);
}

void App::draw_help(ScreenBuffer& buf, const Glyphs&) {
    const int w = std::min(buf.width() - 2, 90), x0 = std::max(0, (buf.width() - w) / 2);
    std::vector<std::pair<std::string, std::string>> lines;
    lines.emplace_back(std::string(views_[current_]->title()) + " keys", "");
    for (const auto& b : views_[current_]->keys()) lines.emplace_back(b.label, b.help);
    lines.emplace_back("", "");
    lines.emplace_back("everywhere", "");
    for (const auto& b : global_keys_) lines.emplace_back(b.label, b.help);
    const int h = std::min(buf.height() - 2, static_cast<int>(lines.size()) + 2);
    const int y0 = std::max(0, (buf.height() - h) / 2);
    buf.fill(x0, y0, w, h, U' ', {Color::none, Color::none, kPlain});
    for (int i = 0; i + 2 < h && static_cast<std::size_t>(i) < lines.size(); ++i) {
        const auto& [k, text] = lines[static_cast<std::size_t>(i)];
        if (text.empty()) {
            buf.text(x0 + 2, y0 + 1 + i, k, {Color::accent, Color::none, kBold}, w - 4);
        } else {
            buf.text(x0 + 2, y0 + 1 + i, k, {Color::warn, Color::none, kBold}, 10);
            buf.text(x0 + 13, y0 + 1 + i, text, {}, w - 15);
        }
    }
}

}  // namespace msmon::tui
