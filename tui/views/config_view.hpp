// Config: msprobe's monitor config as a form — toggle booleans, edit numbers, lists and targets, start or stop a
// dynamic collection — with msprobe's validation on every change, a diff before saving, the collection's state from
// the data, and both versions shown when the file changes under unsaved edits.
#pragma once

#include <ctime>
#include <memory>

#include "core/config/config_editor.hpp"
#include "tui/models/collection_state.hpp"
#include "tui/views/view.hpp"

namespace msmon::tui {

class ConfigView final : public View {
public:
    // `editor` may be null: msmon-tui was started without --config.
    explicit ConfigView(std::unique_ptr<ConfigEditor> editor);
    const char* title() const override { return "Config"; }
    // The form's keys; while a value is typed, Enter and Esc (the line editor has the rest); in the review, y/n.
    const KeyTable& keys() const override;
    KeyTable& own_keys() override { return keys_; }
    bool modal() const override { return editor_ && mode_ != Mode::form; }
    LineEditor* editor() override { return mode_ == Mode::edit || mode_ == Mode::collect_times ? &input_ : nullptr; }
    void collect(Reader& reader) override;
    void draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) override;
    bool watches_files() const override { return editor_ != nullptr; }

private:
    enum class Mode { form, edit, collect_times, review };
    std::vector<ConfigRow> rows() const { return editor_ ? editor_->rows() : std::vector<ConfigRow>{}; }
    Reaction begin_edit();
    Reaction finish_input();
    Reaction save();
    // `c`/`x` on a monitor_v2 config: it has no dynamic mode; says what to do instead.
    Reaction explain_no_dynamic_mode();
    void draw_review(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs);
    void draw_conflict(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs);

    std::unique_ptr<ConfigEditor> editor_;
    KeyTable keys_, typing_keys_, review_keys_;
    Mode mode_ = Mode::form;
    LineEditor input_;
    std::string input_key_, message_;
    std::vector<std::string> input_path_;  // the field being typed, as a key path
    std::size_t selected_ = 0, top_ = 0;
    std::vector<std::int64_t> steps_;
    std::optional<std::int64_t> steps_at_save_;
    timespec write_back_seen_{};  // the trainer's latest write-back this view has taken into steps_at_save_
    int step_ms_ = 0;             // the job's step time from MindFormers' logs (per_step_time), 0 if unknown
    CollectionState state_;
};

}  // namespace msmon::tui
