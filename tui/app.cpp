// Frame composition and key handling; no terminal I/O here (tui/terminal.cpp does that).
#include "tui/app.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "core/text/counted.hpp"
#include "core/text/name_pattern.hpp"
#include "core/text/number_text.hpp"
#include "store/job_reader.hpp"
#include "tui/glyph_stand_ins.hpp"
#include "tui/key_overrides.hpp"
#include "tui/terminal.hpp"
#include "tui/views/chart_view.hpp"
#include "tui/views/overview_view.hpp"
#include "tui/views/view_deps.hpp"
#include "tui/widgets/frame.hpp"
#include "tui/widgets/status_fields.hpp"
#include "tui/widgets/text_wrap.hpp"

namespace msmon::tui {

namespace {

// `path` in `width` columns: whole, or its end after an ellipsis (the job's folder is at the end).
std::string fit_path_left(const std::string& path, int width, bool unicode) {
    if (display_width(path) <= width) return path;
    std::size_t i = 0;
    while (i < path.size() && display_width(std::string_view(path).substr(i)) + 1 > width) {
        ++i;
        while (i < path.size() && (static_cast<unsigned char>(path[i]) & 0xC0) == 0x80) ++i;
    }
    return glyph_text(kCutMark, unicode) + path.substr(i);
}

constexpr std::size_t kBackDepth = 32;

}  // namespace

App::App(std::unique_ptr<Reader> reader, const ConfigTarget& config) : reader_(std::move(reader)) {
    auto open_chart = [this] { show(TabId::chart); };
    // Each tab's view, in the table's order, made by its maker.
    ViewDeps deps{shared_, incidents_, open_chart, config};
    for (const TabEntry& t : kTabs) tabs_.push_back(t.make(deps));

    // One binding per line reads as a table.
    // clang-format off
    global_keys_ = {
        {{'q'}, "q", "quit", [this] {
             quit_ = true;
             return Reaction::none;
         }},
        {{'?'}, "?", "this help", [this] {
             help_ = true;
             help_top_ = 0;
             return Reaction::redraw;
         }},
        {{kKeyEscape}, "Esc", "back one level: out of a page (Health's run config), then to the tab before, and the one before that", [this] { return back(); }},
        {{kKeyTab}, "Tab", "next tab", [this] {
             show(kTabs[(static_cast<std::size_t>(current_) + 1) % kTabCount].id);
             return Reaction::reload;
         }},
        {{kKeyBackTab}, "S-Tab", "previous tab", [this] {
             show(kTabs[(static_cast<std::size_t>(current_) + kTabCount - 1) % kTabCount].id);
             return Reaction::reload;
         }},
        {{'/'}, "/", "filter parameter names (regex; empty clears)", [this] {
             input_ = Input::filter;
             filter_line_.start(shared_.chart_series().name_regex.value_or(""));
             return Reaction::redraw;
         }},
        {{':'}, ":", "type a command (listed below)", [this] {
             input_ = Input::command;
             command_line_.start();
             return Reaction::redraw;
         }},
    };
    // clang-format on
    for (std::size_t i = 0; i < kTabCount; ++i) {
        const std::optional<int> key = tab_key(i);
        if (!key) continue;  // past the tenth: Tab reaches it
        global_keys_.push_back({{*key},
                                std::string(1, static_cast<char>(*key)),
                                std::string(tabs_[i]->title()) + " tab",
                                [this, id = kTabs[i].id] {
                                    show(id);
                                    return Reaction::reload;
                                }});
    }
    // One binding per line reads as a table.
    // clang-format off
    filter_keys_ = {
        {{kKeyEnter}, "Enter", "apply the filter (empty: every name)", [this] {
             input_ = Input::none;
             return apply_filter(filter_line_.commit());
         }},
        {{kKeyEscape}, "Esc", "cancel", [this] {
             input_ = Input::none;
             return Reaction::redraw;
         }},
    };
    // clang-format on
    // One binding per line reads as a table.
    // clang-format off
    command_keys_ = {
        {{kKeyEnter}, "Enter", "run the command", [this] {
             input_ = Input::none;
             return run_command_line(command_line_.commit());
         }},
        {{kKeyEscape}, "Esc", "cancel", [this] {
             input_ = Input::none;
             return Reaction::redraw;
         }},
    };
    // clang-format on
    const auto scroll = [this](int delta) {
        return [this, delta] {
            help_top_ = std::max(0, help_top_ + delta);  // draw_help clamps the end
            return Reaction::redraw;
        };
    };
    // One binding per line reads as a table.
    // clang-format off
    help_keys_ = {
        {{kKeyEscape, '?'}, "Esc/?", "close the help (any key not listed here does too)", [this] {
             help_ = false;
             return Reaction::redraw;
         }},
        {{kKeyDown, 'j'}, "j/Down", "scroll down", scroll(1)},
        {{kKeyUp, 'k'}, "k/Up", "scroll up", scroll(-1)},
        {{kKeyPageDown, ' '}, "PgDn", "a page down", [this, scroll] { return scroll(std::max(1, help_rows_ - 1))(); }},
        {{kKeyPageUp}, "PgUp", "a page up", [this, scroll] { return scroll(-std::max(1, help_rows_ - 1))(); }},
        {{'q'}, "q", "quit", [this] {
             quit_ = true;
             return Reaction::none;
         }},
    };
    // clang-format on
    // Typed in a drill-down's chart, kind and op change the drill-down's statistic; elsewhere, the Overview's.
    // One binding per line reads as a table.
    // clang-format off
    commands_ = {
        {"kind", "K", "show kind K (grad_reduced, actv, loss, ...)", [this](const std::string& arg, std::string& message) {
             if (arg.empty()) {
                 message = "kind needs a name: kind grad_reduced";
                 return Reaction::redraw;
             }
             SeriesSelection& series = shared_.chart_series();
             series.kind = arg;
             // Keep the statistic if the kind has it, else its first (a log's loss has only "value").
             for (const auto& [kind, ops] : overview().model().catalog.kinds)
                 if (kind == arg && !ops.empty() && std::find(ops.begin(), ops.end(), series.op) == ops.end()) {
                     message = "kind " + arg + " has no " + series.op + ": showing its " + ops.front();
                     series.op = ops.front();
                 }
             return Reaction::reload;
         }},
        {"op", "O", "show statistic O (norm, max, min, mean, ...)", [this](const std::string& arg, std::string& message) {
             if (arg.empty()) {
                 message = "op needs a name: op norm";
                 return Reaction::redraw;
             }
             shared_.chart_series().op = arg;
             return Reaction::reload;
         }},
        {"rank", "R", "chart rank R", [this](const std::string& arg, std::string& message) {
             const auto rank = existing_rank(arg, message);
             if (!rank) return Reaction::redraw;
             shared_.chart_rank() = *rank;
             show(TabId::chart);
             return Reaction::reload;
         }},
        {"step", "S", "chart step S (the cursor on it)", [this](const std::string& arg, std::string& message) {
             const auto step = parse_int(arg);
             if (!step) {
                 message = "not a step: " + arg;
                 return Reaction::redraw;
             }
             shared_.focus_step = *step;
             show(TabId::chart);
             return Reaction::reload;
         }},
        {"baseline", "PATH", "compare with another run: a job folder (read into its own store first) or a store; "
                             "off: none", [this](const std::string& arg, std::string& message) {
             if (arg.empty()) {
                 message = shared_.baseline ? "baseline: " + shared_.baseline_name : "no baseline: baseline PATH";
                 return Reaction::redraw;
             }
             if (arg == "off") {
                 set_baseline(nullptr, "");
                 message = "baseline off";
                 return Reaction::reload;
             }
             std::string error;
             auto other = open_job_or_store(arg, error, store_access_);
             if (!other) {
                 message = "baseline: " + error;
                 return Reaction::redraw;
             }
             set_baseline(std::move(other), arg);
             message = "baseline: " + arg + " (Chart: x divides by it)";
             return Reaction::reload;
         }},
        {"help", "", "this help", [this](const std::string&, std::string&) {
             help_ = true;
             help_top_ = 0;
             return Reaction::redraw;
         }},
        {"quit", "", "quit (also q)", [this](const std::string&, std::string&) {
             quit_ = true;
             return Reaction::none;
         }},
        {"q", "", "quit", [this](const std::string&, std::string&) {
             quit_ = true;
             return Reaction::none;
         }},
    };
    // clang-format on
}

App::~App() = default;

std::vector<std::string> App::override_keys(const std::vector<std::pair<std::string, std::string>>& overrides) {
    std::vector<std::string> errors;
    for (const auto& [key, to] : overrides) {
        std::string name, error;
        int from = 0, next = 0;
        if (!parse_key_override(key, to, name, from, next, error)) {
            errors.push_back("keys." + key + ": " + error);
            continue;
        }
        KeyTable* table = nullptr;
        std::vector<const KeyTable*> others;
        if (name == "global") {
            table = &global_keys_;
            for (const auto& tab : tabs_) others.push_back(&tab->keys());
        } else {
            if (const std::optional<TabId> id = tab_named(name)) table = &view(*id).own_keys();
            others.push_back(&global_keys_);
        }
        if (!table) {
            errors.push_back("keys." + key + ": no view '" + name + "' (" + tab_names() + ", global)");
            continue;
        }
        if (!rebind_key(*table, from, next, others, error)) errors.push_back("keys." + key + ": " + error);
    }
    return errors;
}

void App::set_x_axis(const std::string& mode) {
    static_cast<ChartView&>(view(TabId::chart))
        .set_x_axis(mode == "wall"      ? XAxis::wall
                    : mode == "elapsed" ? XAxis::elapsed
                                        : XAxis::step);
}

void App::set_baseline(std::unique_ptr<Reader> baseline, const std::string& name) {
    baseline_ = std::move(baseline);
    shared_.baseline = baseline_.get();
    shared_.baseline_name = baseline_ ? name : "";
}

bool App::select_view(const std::string& name) {
    const std::optional<TabId> id = tab_named(name);
    if (id) show(*id);
    return id.has_value();
}

void App::show(TabId tab) {
    if (tab == current_) return;
    if (current_ == TabId::chart) shared_.drill.reset();
    back_.push_back(current_);
    if (back_.size() > kBackDepth) back_.erase(back_.begin());
    current_ = tab;
}

Reaction App::back() {
    if (view(current_).back()) return Reaction::reload;
    if (back_.empty()) return Reaction::none;
    const TabId to = back_.back();
    back_.pop_back();
    if (current_ == TabId::chart) shared_.drill.reset();
    current_ = to;
    return Reaction::reload;
}

void App::collect() {
    view(current_).collect(*reader_);
    status_.malformed = reader_->issue_count();  // the store's: every session's malformed lines, not this one's
    // The status line's ranks, steps and incidents (the Overview updates the index). The Overview's collect never
    // moves its selection, so this cannot take the chart off the rank it was opened on.
    if (current_ != TabId::overview) view(TabId::overview).collect(*reader_);
}

const OverviewView& App::overview() const {
    return static_cast<const OverviewView&>(view(TabId::overview));
}

std::optional<int> App::existing_rank(const std::string& text, std::string& error) const {
    const auto n = parse_rank(text);
    if (!n) {
        error = "not a rank: " + text;
        return std::nullopt;
    }
    const auto& ranks = overview().model().catalog.ranks;
    if (std::find(ranks.begin(), ranks.end(), *n) != ranks.end()) return static_cast<int>(*n);
    const auto [lo, hi] = std::minmax_element(ranks.begin(), ranks.end());
    error = "no rank " + text +
            (ranks.empty()
                 ? std::string(": no ranks yet")
                 : " (" + counted(ranks.size(), "rank") + ", " + std::to_string(*lo) + "-" + std::to_string(*hi) + ")");
    return std::nullopt;
}

Reaction App::run_command_line(const std::string& text) {
    const CommandLine line = split_command(text);
    if (line.verb.empty()) return Reaction::redraw;
    // A rank is checked before any view takes it (the chart's focus, the Anomalies filter): one that does not exist
    // is said so, instead of landing on another.
    if (line.verb == "rank" && !line.arg.empty() && !existing_rank(line.arg, message_)) return Reaction::redraw;
    Reaction r = Reaction::none;
    if (run_command({&view(current_).commands(), &commands_}, line, r, message_)) return r;
    message_ = "unknown command: " + text + " (? lists them)";
    return Reaction::redraw;
}

Reaction App::apply_filter(const std::string& text) {
    std::optional<std::string> regex;
    if (!text.empty()) {
        if (const auto why = view(current_).check_filter(text)) {
            message_ = *why;
            return Reaction::redraw;
        }
        regex = text;
    }
    if (!view(current_).set_filter(regex)) shared_.chart_series().name_regex = regex;
    return Reaction::reload;
}

LineEditor* App::active_editor() {
    if (input_ == Input::filter) return &filter_line_;
    if (input_ == Input::command) return &command_line_;
    return view(current_).modal() ? view(current_).editor() : nullptr;
}

std::vector<App::Mode> App::dispatch_chain() {
    if (input_ != Input::none)
        return {{input_ == Input::filter ? "the / filter line" : "the : command line",
                 input_ == Input::filter ? &filter_keys_ : &command_keys_},
                {"editing the line", &active_editor()->keys()}};
    if (help_) return {{"this help", &help_keys_}};
    View& v = view(current_);
    if (v.modal()) {
        std::vector<Mode> chain{{std::string(v.title()) + " (typing or confirming)", &v.keys()}};
        if (LineEditor* e = v.editor()) chain.push_back({"editing the line", &e->keys()});
        return chain;
    }
    return {{std::string(v.title()) + " keys", &v.keys()}, {"everywhere", &global_keys_}};
}

std::vector<int> App::quit_keys() {
    std::vector<int> quit, taken;  // a key bound earlier in the chain is that binding's
    for (const Mode& m : dispatch_chain())
        for (const KeyBinding& b : *m.keys)
            for (const int k : b.keys) {
                if (std::find(taken.begin(), taken.end(), k) != taken.end()) continue;
                taken.push_back(k);
                if (b.help == "quit") quit.push_back(k);
            }
    return quit;
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
    const bool plain = input_ == Input::none && !help_ && !view(current_).modal();
    if (key == kKeyMouseClick) {
        if (!plain) return true;
        if (mouse_y == 0) {  // tab row
            int x = 0;
            for (std::size_t i = 0; i < kTabCount; ++i) {
                const int w = static_cast<int>(tab_label(i, tabs_[i]->title()).size()) + 1;  // as drawn, and a gap
                if (mouse_x >= x && mouse_x < x + w) {
                    show(kTabs[i].id);
                    reload = redraw = true;
                }
                x += w;
            }
            return true;
        }
        redraw = view(current_).click(mouse_x, mouse_y) != Reaction::none;
        return true;
    }
    if (key == kKeyWheelDown) key = kKeyDown;
    if (key == kKeyWheelUp) key = kKeyUp;
    // The mode's tables in order; a key none binds is typed into the line being edited, closes help, or is ignored.
    Reaction r = Reaction::none;
    bool handled = false;
    for (const Mode& m : dispatch_chain())
        if ((handled = dispatch(*m.keys, key, r))) break;
    if (!handled && !plain) {
        if (help_) help_ = false;
        else if (LineEditor* e = active_editor()) e->edit(key);
        r = Reaction::redraw;
    }
    reload = reload || r == Reaction::reload;
    redraw = redraw || r != Reaction::none || reload;
    return !quit_;
}

std::vector<std::pair<std::string, std::string>> App::help_lines() {
    // What the keys do where help was opened from, then help's own keys, then the commands.
    const bool open = help_;
    help_ = false;
    std::vector<Mode> modes = dispatch_chain();
    help_ = open;
    modes.push_back({"in this help", &help_keys_});
    std::vector<std::pair<std::string, std::string>> lines;
    for (const Mode& m : modes) {
        if (m.keys->empty()) continue;
        if (!lines.empty()) lines.emplace_back("", "");
        lines.emplace_back(m.name, "");
        for (const auto& b : *m.keys) lines.emplace_back(b.label, b.help);
    }
    lines.emplace_back("", "");
    lines.emplace_back("commands (type : then the command, Enter)", "");
    const CommandTable* tables[] = {&view(current_).commands(), &commands_};
    for (const CommandTable* table : tables)
        for (const Command& c : *table) {
            if (table == &commands_ && c.verb == "q") continue;  // listed with quit
            lines.emplace_back(c.verb + (c.args.empty() ? "" : " " + c.args), c.help);
        }
    return lines;
}

namespace {

// The table's first keys, as many as fit `width` columns (at most `max`), each with its help up to a '(', ',' or ';'.
std::string key_hint(const KeyTable& table, std::size_t max, int width) {
    std::string out;
    for (std::size_t i = 0; i < table.size() && i < max; ++i) {
        std::string help = table[i].help;
        if (const auto cut = help.find_first_of("(,;"); cut != std::string::npos) help = help.substr(0, cut);
        while (!help.empty() && help.back() == ' ') help.pop_back();
        std::string entry = table[i].label + " " + help + "  ";
        if (display_width(out) + display_width(entry) > width) break;
        out += entry;
    }
    return out;
}

}  // namespace

void App::compose(ScreenBuffer& buf, const Glyphs& glyphs) {
    buf.clear();
    const int w = buf.width(), h = buf.height();
    int x = 0;
    for (std::size_t i = 0; i < kTabCount; ++i) {
        const std::string tab = tab_label(i, tabs_[i]->title());
        const Style s = kTabs[i].id == current_
                            ? Style{Color::accent, Color::none, static_cast<std::uint8_t>(kReverse | kBold)}
                            : Style{Color::dim, Color::none, kPlain};
        x += buf.text(x, 0, tab, s, w - x) + 1;
    }
    const int body_h = std::max(0, h - 3);
    view(current_).draw(buf, 0, 1, w, body_h, glyphs);
    // Hint bar: the mode's first keys, then help and quit — from the same tables that dispatch.
    const Style hint{Color::dim, Color::none, kPlain};
    if (input_ != Input::none) {
        active_editor()->draw(buf, 0, h - 2, w, input_ == Input::filter ? "/" : ":",
                              {Color::accent, Color::none, kBold});
    } else if (view(current_).modal()) {
        buf.text(0, h - 2, key_hint(view(current_).keys(), 4, w), hint, w);
    } else {
        // Help and quit always show: the view's keys get what is left.
        const std::string always = "? help  q quit";
        buf.text(0, h - 2, key_hint(view(current_).keys(), 4, w - display_width(always)) + always, hint, w);
    }
    const OverviewModel& om = overview().model();
    const std::string steps = om.catalog.max_step >= om.catalog.min_step
                                  ? std::to_string(om.catalog.min_step) + "-" + std::to_string(om.catalog.max_step)
                                  : std::string("-");
    // The status line's fields in the order they show, each with its rank when the line is too narrow for all:
    // the answer to a command first (it is what the person is looking for, and it lasts one key), then what went
    // wrong (incidents, unhealthy checkpoints, malformed lines, a notice, data gone quiet), then where the run is;
    // the rate goes first, and the folder is cut from the left to what room is left.
    // Incidents, not anomalies: one NaN is dozens of anomalies and one incident. Too many to group: the count.
    const std::size_t n_incidents = incidents_.incidents().size();
    const std::string events = incidents_.over_limit()
                                   ? std::to_string(incidents_.total()) + " anomalies, not grouped"
                                   : std::to_string(n_incidents) + (n_incidents == 1 ? " incident" : " incidents");
    const bool quiet = status_.seconds_since_data >= 60;
    std::string watch = status_.watch;
    if (status_.seconds_since_data >= 0)
        watch += ", data " + std::to_string(static_cast<long long>(status_.seconds_since_data)) + "s ago";
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.0f values/s", status_.values_per_second);
    const std::vector<StatusField> fields = {
        {message_, 0},
        {status_.waiting, 0},
        {status_.history, 1},
        {counted(om.catalog.ranks.size(), "rank"), 5},
        {"steps " + steps, 4},
        {watch, quiet ? 2 : 6},
        {rate, 7},
        {events, 1},
        {om.unhealthy_checkpoints ? std::to_string(om.unhealthy_checkpoints) + " unhealthy ckpts" : "", 1},
        {std::to_string(status_.malformed) + " malformed", status_.malformed ? 2 : 6},
        {status_.notice, 3},
    };
    std::string status = fit_status_fields(fields, w, glyphs.unicode);
    const int room = w - display_width(status) - 3;
    if (room >= 8) status += " | " + fit_path_left(status_.source, room, glyphs.unicode);
    buf.fill(0, h - 1, w, 1, U' ', {Color::none, Color::none, kReverse});
    buf.text(0, h - 1, status, {Color::none, Color::none, kReverse}, w);
    if (help_) draw_help(buf, glyphs);
}

void App::draw_help(ScreenBuffer& buf, const Glyphs& glyphs) {
    // A bordered box over the view, as wide as the screen allows up to 100 columns; long help wraps under itself.
    const int w = std::min(buf.width(), 100), h = std::max(3, buf.height() - 1);
    const int x0 = (buf.width() - w) / 2, y0 = 0;
    constexpr int kKeyCol = 12;
    const int text_w = std::max(10, w - 4 - kKeyCol - 1);
    struct Row {
        std::string key, text;
        bool heading = false;
    };
    std::vector<Row> rows;
    for (const auto& [key, text] : help_lines()) {
        if (text.empty()) {
            rows.push_back({key, "", !key.empty()});
            continue;
        }
        const auto parts = wrap_text(text, text_w);
        const auto keys = wrap_text(key, kKeyCol);  // a long label (a command with arguments) wraps too
        for (std::size_t i = 0; i < std::max(parts.size(), keys.size()); ++i)
            rows.push_back({i < keys.size() ? keys[i] : "", i < parts.size() ? parts[i] : ""});
    }
    help_rows_ = h - 2;
    help_top_ = std::clamp(help_top_, 0, std::max(0, static_cast<int>(rows.size()) - help_rows_));
    const Style border{Color::accent, Color::none, kPlain};
    buf.fill(x0, y0, w, h, U' ', {});
    draw_frame(buf, x0, y0, w, h, glyphs.unicode, border);
    buf.text(x0 + 2, y0, " help: " + std::string(view(current_).title()) + " ", {Color::accent, Color::none, kBold},
             w - 4);
    const int shown_end = std::min(static_cast<int>(rows.size()), help_top_ + help_rows_);
    const std::string where = rows.size() > static_cast<std::size_t>(help_rows_)
                                  ? " " + std::to_string(help_top_ + 1) + "-" + std::to_string(shown_end) + " of " +
                                        std::to_string(rows.size()) + ", j/k scroll, Esc close "
                                  : " Esc close ";
    buf.text(x0 + std::max(2, w - 2 - display_width(where)), y0 + h - 1, where, border, w - 4);
    for (int i = 0; i < help_rows_ && help_top_ + i < static_cast<int>(rows.size()); ++i) {
        const Row& row = rows[static_cast<std::size_t>(help_top_ + i)];
        const int y = y0 + 1 + i;
        if (row.heading) {
            buf.text(x0 + 2, y, row.key, {Color::accent, Color::none, kBold}, w - 4);
        } else {
            buf.text(x0 + 2, y, row.key, {Color::warn, Color::none, kBold}, kKeyCol);
            buf.text(x0 + 3 + kKeyCol, y, row.text, {}, text_w);
        }
    }
}

}  // namespace msmon::tui
