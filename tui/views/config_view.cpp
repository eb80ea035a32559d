// Config view: the form, its prompts, the review-before-save and the conflict choice.
#include "tui/views/config_view.hpp"

#include <algorithm>

#include "core/config/monitor_v2_config_fields.hpp"
#include "tui/tab_table.hpp"
#include "tui/views/view_deps.hpp"
#include "tui/widgets/frame.hpp"
#include "tui/widgets/text_wrap.hpp"

namespace msmon::tui {

using json = nlohmann::ordered_json;

namespace {

void draw_box(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs,
              const std::vector<std::pair<std::string, Style>>& lines) {
    const int w = std::min(width - 4, 110);
    std::vector<std::pair<std::string, Style>> wrapped;
    for (const auto& [text, style] : lines)
        for (auto& l : wrap_text(text, w - 4, 2)) wrapped.push_back({std::move(l), style});
    const int h = std::min(height - 2, static_cast<int>(wrapped.size()) + 2);
    const int x0 = x + std::max(0, (width - w) / 2), y0 = y + std::max(0, (height - h) / 2);
    buf.fill(x0, y0, w, h, U' ', {});
    draw_frame(buf, x0, y0, w, h, glyphs.unicode, {Color::accent, Color::none, kPlain});
    for (int i = 0; i + 2 < h && i < static_cast<int>(wrapped.size()); ++i)
        buf.text(x0 + 2, y0 + 1 + i, wrapped[static_cast<std::size_t>(i)].first,
                 wrapped[static_cast<std::size_t>(i)].second, w - 4);
}

bool is_bool_row(const ConfigRow& r) {
    return (r.field && std::string(r.field->type) == "bool") || r.value.is_boolean();
}

const Style kTitle{Color::accent, Color::none, kBold};
const Style kFaint{Color::dim, Color::none, kPlain};
const Style kWarn{Color::warn, Color::none, kBold};
const Style kBad{Color::bad, Color::none, kBold};
const Style kGood{Color::good, Color::none, kPlain};

}  // namespace

ConfigView::ConfigView(std::unique_ptr<ConfigEditor> editor) : editor_(std::move(editor)) {
    auto move = [this](long delta) {
        const long n = static_cast<long>(rows().size());
        if (n == 0) return Reaction::none;
        selected_ = static_cast<std::size_t>(std::clamp(static_cast<long>(selected_) + delta, 0L, n - 1));
        return Reaction::redraw;
    };
    auto with_editor = [this](auto fn) {
        return [this, fn] {
            if (!editor_ || !editor_->loaded()) return Reaction::none;
            return fn();
        };
    };
    // One binding per line reads as a table.
    // clang-format off
    keys_ = {
        {{kKeyDown, 'j'}, "j/Down", "next field", [move] { return move(1); }},
        {{kKeyUp, 'k'}, "k/Up", "previous field", [move] { return move(-1); }},
        {{' '}, "Space", "toggle a true/false field", with_editor([this] {
             const auto r = rows();
             if (selected_ < r.size() && is_bool_row(r[selected_])) editor_->toggle(r[selected_].path);
             return Reaction::redraw;
         })},
        {{kKeyEnter}, "Enter", "edit the value as JSON (true/false fields toggle)", with_editor([this] { return begin_edit(); })},
        {{'c'}, "c", "start a collection: dynamic_on true + collect_times N (the count restarts; v1 only)", with_editor([this] {
             if (!has_dynamic_mode(editor_->version())) return explain_no_dynamic_mode();
             mode_ = Mode::collect_times;
             const json* ct = find_path(editor_->edited(), {"collect_times"});
             input_.start(ct && ct->is_number_integer() && ct->get<long long>() > 0 ? ct->dump() : "5");
             return Reaction::redraw;
         })},
        {{'x'}, "x", "stop a running collection early (dynamic_on true + collect_times 0: one more step; v1 only)",
         with_editor([this] {
             if (!editor_->stop_collection()) return explain_no_dynamic_mode();
             mode_ = Mode::review;
             return Reaction::redraw;
         })},
        {{'s'}, "s", "review the changes against the file, then save (atomic)", with_editor([this] {
             mode_ = Mode::review;
             return Reaction::redraw;
         })},
        {{'u'}, "u", "undo every unsaved change", with_editor([this] {
             editor_->discard_edits();
             message_ = "unsaved changes undone";
             return Reaction::redraw;
         })},
        {{'D'}, "D", "remove the key from the file (msprobe's default applies)", with_editor([this] {
             const auto r = rows();
             if (selected_ < r.size()) editor_->remove(r[selected_].path);
             return Reaction::redraw;
         })},
        {{'r'}, "r", "re-read the file (drops unsaved changes)", [this] {
             if (!editor_) return Reaction::none;
             editor_->reload();
             message_ = editor_->loaded() ? "re-read from disk" : "";
             return Reaction::redraw;
         }},
        {{'m'}, "m", "after the file changed under your edits: keep yours, on top of the new file", with_editor([this] {
             editor_->keep_mine();
             return Reaction::redraw;
         })},
        {{'t'}, "t", "after the file changed under your edits: take the file's version", with_editor([this] {
             editor_->take_theirs();
             return Reaction::redraw;
         })},
        {{kKeyHome, 'g'}, "g/Home", "first field", [move] { return move(-1000000); }},
        {{kKeyEnd, 'G'}, "G/End", "last field", [move] { return move(1000000); }},
    };
    // clang-format on
    // One binding per line reads as a table.
    // clang-format off
    typing_keys_ = {
        {{kKeyEnter}, "Enter", "set the value (JSON); for collect_times: review and save", [this] { return finish_input(); }},
        {{kKeyEscape}, "Esc", "cancel", [this] {
             mode_ = Mode::form;
             message_.clear();
             return Reaction::redraw;
         }},
    };
    // clang-format on
    // One binding per line reads as a table.
    // clang-format off
    review_keys_ = {
        {{'y', kKeyEnter}, "y/Enter", "save (atomic rename; msmon saves again if a trainer write-back races it)", [this] {
             return editor_->pending_aborts_training() ? Reaction::redraw : save();
         }},
        {{'Y'}, "Y", "save a change that aborts training (print_struct, cc_log_only)", [this] {
             return editor_->pending_aborts_training() ? save() : Reaction::redraw;
         }},
        {{'n', kKeyEscape}, "n/Esc", "back to the form", [this] {
             mode_ = Mode::form;
             return Reaction::redraw;
         }},
    };
    // clang-format on
}

void ConfigView::collect(Reader& reader) {
    if (!editor_) return;
    editor_->poll();
    steps_ = reader.collected_steps(4096);
    // A write-back the trainer made (a collection finished, ours or one started from a shell): the steps collected
    // so far are done; a collection started after it counts only newer steps, from before its first step is in.
    if (editor_->saw_write_back()) {
        const timespec t = editor_->write_back_time();
        if (t.tv_sec != write_back_seen_.tv_sec || t.tv_nsec != write_back_seen_.tv_nsec) {
            write_back_seen_ = t;
            if (!steps_.empty()) steps_at_save_ = steps_.front();
        }
    }
    // The slowest rank's latest step time: a save over a running collection watches that long (SaveTiming::step_ms).
    step_ms_ = 0;
    for (const auto& rs : reader.rank_series({"per_step_time", "value", std::nullopt, 1, {}}))
        if (!rs.points.empty() && rs.points.back().value > step_ms_ && rs.points.back().value < 3600000)
            step_ms_ = static_cast<int>(rs.points.back().value);
    state_ = describe_collection(
        steps_, editor_->on_disk(), steps_at_save_,
        editor_->saw_write_back() ? std::optional<std::string>(clock_text(editor_->write_back_time())) : std::nullopt);
}

Reaction ConfigView::begin_edit() {
    const auto r = rows();
    if (selected_ >= r.size()) return Reaction::none;
    if (is_bool_row(r[selected_])) {
        editor_->toggle(r[selected_].path);
        return Reaction::redraw;
    }
    mode_ = Mode::edit;
    input_key_ = r[selected_].key;
    input_path_ = r[selected_].path;
    input_.start(r[selected_].value.is_string() ? r[selected_].value.get<std::string>() : r[selected_].value.dump());
    return Reaction::redraw;
}

Reaction ConfigView::finish_input() {
    if (mode_ == Mode::collect_times) {
        char* end = nullptr;
        const std::string text = input_.commit();
        const long long n = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || *end != '\0' || n < 0) {
            message_ = "collect_times takes a number >= 0";
            return Reaction::redraw;
        }
        editor_->start_collection(n);
        mode_ = Mode::review;
        return Reaction::redraw;
    }
    std::string error;
    if (!editor_->set(input_path_, input_.commit(), error)) {
        message_ = error;
        return Reaction::redraw;
    }
    mode_ = Mode::form;
    message_.clear();
    return Reaction::redraw;
}

Reaction ConfigView::explain_no_dynamic_mode() {
    message_ =
        "monitor_v2 has no dynamic mode: it reads this file once, when the job starts. Set start_step/stop_step "
        "(or collect_times) and the monitors, save, and restart the job.";
    return Reaction::redraw;
}

Reaction ConfigView::save() {
    const std::int64_t newest = steps_.empty() ? -1 : steps_.front();
    // `x` over a running collection (dynamic_on true on disk, collect_times 0 saved) ends that collection: its steps
    // still count from where it began. Any other save of dynamic_on true starts a new one.
    const bool stops_running = editor_->on_disk().value("dynamic_on", json(false)) == json(true) &&
                               editor_->edited().value("collect_times", json(-1)) == json(0);
    // The save blocks the UI while it watches: at most 3 s. A longer step's swallowing write-back still shows up on
    // the next poll, as "the file changed … dynamic_on: true → false".
    SaveTiming timing;
    timing.step_ms = std::min(step_ms_, 3000);
    const SaveReport report = editor_->save(timing);
    mode_ = Mode::form;
    message_.clear();
    if (report.in_effect && !stops_running && editor_->edited().value("dynamic_on", json(false)) == json(true))
        steps_at_save_ = newest;
    return Reaction::reload;
}

const KeyTable& ConfigView::keys() const {
    switch (mode_) {
        case Mode::form:
            return keys_;
        case Mode::edit:
        case Mode::collect_times:
            return typing_keys_;
        case Mode::review:
            return review_keys_;
    }
    return keys_;
}

void ConfigView::draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) {
    int row = y;
    // Lines that must be read whole (a state, a refusal and the way around it) wrap; `indent` marks their sequels.
    const auto wrapped = [&](const std::string& text, int indent, const Style& style) {
        for (const auto& line : wrap_text(text, width - indent, 2))
            if (row < y + height) buf.text(x + indent, row++, line, style, width - indent);
    };
    if (!editor_) {
        row = y + 1;
        wrapped("No monitor config: start msmon-tui with --config PATH (the JSON file msprobe's TrainerMon reads).", 2,
                kFaint);
        wrapped("The job must run with DYNAMIC_MONITOR=True for edits to take effect while it trains.", 2, kFaint);
        return;
    }
    const bool v2 = editor_->loaded() && editor_->version() == MonitorConfigVersion::v2;
    const std::string title = v2 ? "monitor_v2 config " : "monitor config ";
    const int title_width = static_cast<int>(title.size());
    buf.text(x, row, title, kTitle, width);
    // When edits take effect: after the path where both fit, else on a line of its own.
    const std::string when = v2 ? "(read once, when the job starts: no dynamic mode)"
                                : "(takes effect while training only with DYNAMIC_MONITOR=True)";
    if (title_width + display_width(editor_->path()) + 3 + display_width(when) <= width) {
        buf.text(x + title_width, row++, editor_->path() + "   " + when, {}, width - title_width);
    } else {
        buf.text(x + title_width, row++, editor_->path(), {}, width - title_width);
        wrapped(when, 2, {});
    }
    if (!editor_->loaded()) {
        // Wrapped: a refusal (a link, a FIFO) ends with the way around it.
        wrapped("cannot read it: " + editor_->load_error(), 0, kBad);
        return;
    }
    const Style state_style = state_.phase == CollectionState::Phase::collecting ? kGood
                              : state_.phase == CollectionState::Phase::waiting  ? kWarn
                              : state_.phase == CollectionState::Phase::finished ? kWarn
                                                                                 : kFaint;
    if (v2) wrapped("the job collects " + monitor_v2_window_text(editor_->on_disk()), 0, kFaint);
    else wrapped(state_.text, 0, state_style);
    const ConfigCheck check = editor_->check();
    if (!check.ok()) buf.text(x, row++, "REJECTED by msprobe (cannot be saved): " + check.errors.front(), kBad, width);
    else if (!check.warnings.empty())
        buf.text(x, row++,
                 "warning: " + check.warnings.front() +
                     (check.warnings.size() > 1 ? " (+" + std::to_string(check.warnings.size() - 1) + " more)" : ""),
                 kWarn, width);
    else buf.text(x, row++, "msprobe accepts this version", kGood, width);
    const std::string notice = !message_.empty() ? message_ : editor_->notice();
    const bool alarming = notice.find("NOT") != std::string::npos || notice.find("changed") != std::string::npos ||
                          notice.find("racing") != std::string::npos;
    buf.text(x, row++, notice, alarming ? kWarn : kFaint, width);
    const auto r = rows();
    // monitor_v2's nested fields ("monitors.weight_grad.micro_batch_number") widen the name column; the value
    // column gives way on a narrow screen so that the help keeps some room.
    int name_w = 22;
    for (const auto& f : r) name_w = std::clamp(static_cast<int>(f.key.size()), name_w, 40);
    const int value_w = name_w > 22 ? std::clamp(width - (2 + name_w + 1) - 8 - 20, 12, 28) : 28;
    char head[160];
    std::snprintf(head, sizeof head, "  %-*s %-*s %-6s %s", name_w, "field", value_w, "value", "type", "what");
    buf.text(x, row++, head, kFaint, width);

    const int footer = 1;
    const int visible = std::max(1, y + height - row - footer);
    selected_ = std::min(selected_, r.empty() ? 0 : r.size() - 1);
    if (selected_ < top_) top_ = selected_;
    if (selected_ >= top_ + static_cast<std::size_t>(visible)) top_ = selected_ - static_cast<std::size_t>(visible) + 1;
    for (int i = 0; i < visible && top_ + static_cast<std::size_t>(i) < r.size(); ++i) {
        const std::size_t k = top_ + static_cast<std::size_t>(i);
        const ConfigRow& f = r[k];
        const bool sel = k == selected_;
        const std::string value = f.present ? f.value.dump() : "(default " + f.value.dump() + ")";
        char line[512];
        std::snprintf(line, sizeof line, "%c%c%-*s ", sel ? '>' : ' ', f.changed ? '*' : ' ', name_w, f.key.c_str());
        Style base = sel ? Style{Color::none, Color::none, kReverse} : Style{};
        if (sel) buf.fill(x, row + i, width, 1, U' ', base);
        int col = buf.text(
            x, row + i, line,
            f.changed ? Style{Color::warn, Color::none, static_cast<std::uint8_t>(base.attr | kBold)} : base, width);
        Style vstyle = base;
        if (!f.present) vstyle.fg = Color::dim;
        col += buf.text(x + col, row + i, value, vstyle, value_w);
        col = std::max(col, 2 + name_w + 1 + value_w);
        col += buf.text(x + col, row + i, std::string(" ") + (f.field ? f.field->type : "kept"),
                        Style{Color::dim, Color::none, base.attr}, 7);
        col = std::max(col, 2 + name_w + 1 + value_w + 7);
        std::string what = f.field ? f.field->help : "not an msprobe key: kept as it is";
        Style wstyle{Color::dim, Color::none, base.attr};
        if (f.field && f.field->aborts_training) wstyle = Style{Color::bad, Color::none, base.attr};
        buf.text(x + col + 1, row + i, what, wstyle, width - col - 1);
    }
    const int bottom = y + height - 1;
    const auto pending = editor_->pending();
    if (mode_ == Mode::edit) {
        input_.draw(buf, x, bottom, width, input_key_ + " = ", kTitle);
    } else if (mode_ == Mode::collect_times) {
        input_.draw(buf, x, bottom, width, "collect_times for the new collection: ", kTitle);
    } else if (!pending.empty()) {
        buf.text(x, bottom,
                 std::to_string(pending.size()) + " unsaved change" + (pending.size() > 1 ? "s" : "") +
                     " — s review and save, u undo",
                 kWarn, width);
    } else {
        buf.text(x, bottom, "no unsaved changes", kFaint, width);
    }
    if (editor_->conflict()) draw_conflict(buf, x, y, width, height, glyphs);
    else if (mode_ == Mode::review) draw_review(buf, x, y, width, height, glyphs);
}

void ConfigView::draw_review(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) {
    std::vector<std::pair<std::string, Style>> lines;
    const auto pending = editor_->pending_lines();
    lines.push_back({"Save these changes to " + editor_->path() + "?", kTitle});
    if (pending.empty()) lines.push_back({"  nothing changed", kFaint});
    for (const auto& l : pending) lines.push_back({"  " + l, {}});
    lines.push_back({"", {}});
    const json& doc = editor_->edited();
    const ConfigCheck check = editor_->check();
    for (const auto& e : check.errors) lines.push_back({"REJECTED by msprobe: " + e + " — fix it first", kBad});
    for (const auto& w : check.warnings) lines.push_back({"warning: " + w, kWarn});
    const bool v2 = editor_->version() == MonitorConfigVersion::v2;
    if (!v2 && doc.value("dynamic_on", json(false)) == json(true)) {
        if (doc.value("collect_times", json(-1)) == json(0))
            lines.push_back(
                {"Stops the running collection: msprobe ignores dynamic_on false while collecting, so this writes "
                 "dynamic_on true with collect_times 0 — one more step is collected, then msprobe writes "
                 "dynamic_on false back.",
                 kWarn});
        else
            lines.push_back(
                {"dynamic_on true: the trainer reloads at its next step and (re)starts collecting — the count "
                 "restarts from 0, and anomaly.json is emptied when alert.dump is on.",
                 {}});
    }
    if (v2)
        lines.push_back(
            {"monitor_v2 reads this file once, when the job starts: the change applies at the job's next "
             "start (it has no dynamic mode).",
             kFaint});
    else
        lines.push_back(
            {"The job must run with DYNAMIC_MONITOR=True; otherwise it read this file once at start.", kFaint});
    if (!v2 && step_ms_ > 0)
        lines.push_back(
            {"After saving over a running collection msmon watches one step (" +
                 std::to_string(std::min(step_ms_, 3000)) +
                 " ms, from the logs) for its final write-back, which would swallow this change, and saves again "
                 "if it comes.",
             kFaint});
    const bool aborts = editor_->pending_aborts_training();
    if (aborts)
        lines.push_back(
            {std::string(v2 ? "monitors.cc.cc_log_only MAY INTERRUPT TRAINING (msprobe's docs)"
                            : "print_struct / cc_distribution.cc_log_only ABORT TRAINING after the first step") +
                 ". Press Y (capital) to save anyway, Esc to cancel.",
             kBad});
    else if (check.ok())
        lines.push_back(
            {"y/Enter save (atomic rename; msmon re-saves if a trainer write-back races it)   Esc cancel", kTitle});
    else lines.push_back({"Esc back to the form", kTitle});
    draw_box(buf, x, y, width, height, glyphs, lines);
}

void ConfigView::draw_conflict(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) {
    const ConfigConflict& c = *editor_->conflict();
    std::vector<std::pair<std::string, Style>> lines;
    lines.push_back({editor_->notice(), kWarn});
    lines.push_back({"On disk now (theirs):", kTitle});
    for (const auto& l : c.their_changes) lines.push_back({"  " + l, {}});
    if (c.their_changes.empty()) lines.push_back({"  same content, new mtime", kFaint});
    lines.push_back({"Your unsaved edits (yours):", kTitle});
    for (const auto& l : c.my_changes) lines.push_back({"  " + l, {}});
    lines.push_back({"", {}});
    lines.push_back({"m keep yours on top of the new file (then s to save)   t take theirs and drop yours", kTitle});
    draw_box(buf, x, y, width, height, glyphs, lines);
}

std::unique_ptr<View> make_config_view(ViewDeps& deps) {
    return std::make_unique<ConfigView>(deps.config.path.empty() ? nullptr
                                                                 : std::make_unique<ConfigEditor>(deps.config));
}

}  // namespace msmon::tui
