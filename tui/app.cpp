// Frame composition and key handling; no terminal I/O here (tui/terminal.cpp does that).
#include "tui/app.hpp"

#include <algorithm>
#include <cstdio>
#include <regex>

#include "tui/terminal.hpp"
#include "tui/views/anomalies_view.hpp"
#include "tui/views/chart_view.hpp"
#include "tui/views/config_view.hpp"
#include "tui/views/expert_load_view.hpp"
#include "tui/views/health_view.hpp"
#include "tui/views/overview_view.hpp"

namespace msmon::tui {

App::App(std::unique_ptr<Reader> reader, const std::string& config_path) : reader_(std::move(reader)) {
    auto open_chart = [this] {
        return_to_ = current_;
        current_ = 1;
    };
    views_.push_back(std::make_unique<OverviewView>(shared_, open_chart));
    views_.push_back(std::make_unique<ChartView>(shared_));
    views_.push_back(std::make_unique<AnomaliesView>(shared_, open_chart));
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
             current_ = (current_ + 1) % views_.size();
             return Reaction::reload;
         }},
        {{kKeyBackTab}, "S-Tab", "previous tab", [this] {
             current_ = (current_ + views_.size() - 1) % views_.size();
             return Reaction::reload;
         }},
        {{'/'}, "/", "filter parameter names (regex; empty clears)", [this] {
             input_ = Input::filter;
             input_text_ = shared_.series.name_regex.value_or("");
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
            current_ = i;
            return true;
        }
    }
    return false;
}

void App::collect() {
    views_[current_]->collect(*reader_);
    if (current_ != 0) views_[0]->collect(*reader_);  // keeps the focus rank and anomaly count current
    anomaly_count_ = static_cast<OverviewView&>(*views_[0]).model().anomaly_count;
}

Reaction App::run_command(const std::string& command) {
    const auto space = command.find(' ');
    const std::string verb = command.substr(0, space);
    const std::string arg = space == std::string::npos ? "" : command.substr(space + 1);
    std::string error;
    if (views_[current_]->command(verb, arg, error)) {
        status_.notice = error;
        return Reaction::redraw;
    }
    if (verb == "q" || verb == "quit") {
        quit_ = true;
        return Reaction::none;
    }
    if (verb == "kind" && !arg.empty()) {
        shared_.series.kind = arg;
        return Reaction::reload;
    }
    if (verb == "op" && !arg.empty()) {
        shared_.series.op = arg;
        return Reaction::reload;
    }
    if (verb == "rank" && !arg.empty()) {
        shared_.focus_rank = std::atoi(arg.c_str());
        current_ = 1;
        return Reaction::reload;
    }
    if (verb == "step" && !arg.empty()) {
        shared_.focus_step = std::atoll(arg.c_str());
        current_ = 1;
        return Reaction::reload;
    }
    if (verb == "help") {
        help_ = true;
        return Reaction::redraw;
    }
    status_.notice = "unknown command: " + command;
    return Reaction::redraw;
}

bool App::handle_key(int key, int mouse_x, int mouse_y, bool& reload, bool& redraw) {
    if (key == kKeyResize) {
        redraw = true;
        return true;
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
                        status_.notice = "not a valid regular expression: " + input_text_;
                        valid = false;
                    }
                }
                if (valid && !views_[current_]->set_filter(regex)) shared_.series.name_regex = regex;
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
        current_ = static_cast<std::size_t>(key - '1');
        reload = redraw = true;
        return true;
    }
    if (key == kKeyMouseClick) {
        if (mouse_y == 0) {  // tab row
            int x = 0;
            for (std::size_t i = 0; i < views_.size(); ++i) {
                const int w = static_cast<int>(std::string(views_[i]->title()).size()) + 5;
                if (mouse_x >= x && mouse_x < x + w) {
                    current_ = i;
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
    if (key == kKeyEscape && current_ == 1) {  // back from the chart to where it was opened from
        current_ = return_to_ == 1 ? 0 : return_to_;
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
    const OverviewModel& om = static_cast<OverviewView&>(*views_[0]).model();
    const std::string steps = om.catalog.max_step >= om.catalog.min_step
                                  ? std::to_string(om.catalog.min_step) + "-" + std::to_string(om.catalog.max_step)
                                  : std::string("-");
    // Numbers first, the folder last: at 80 columns the path is what gets cut.
    char status[640];
    const std::string ckpts =
        om.unhealthy_checkpoints ? " | " + std::to_string(om.unhealthy_checkpoints) + " unhealthy ckpts" : std::string();
    std::snprintf(status, sizeof status, " %zu ranks | steps %s | %s%s | %.0f values/s | %zu anomalies%s | %llu malformed | %s%s%s",
                  om.catalog.ranks.size(), steps.c_str(), status_.watch.c_str(),
                  status_.seconds_since_data < 0
                      ? ""
                      : (", data " + std::to_string(static_cast<long long>(status_.seconds_since_data)) + "s ago").c_str(),
                  status_.values_per_second, anomaly_count_, ckpts.c_str(), static_cast<unsigned long long>(status_.malformed),
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
