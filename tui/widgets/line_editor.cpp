// The line editor: a key table of editing keys; any other printable key is typed.
#include "tui/widgets/line_editor.hpp"

#include "core/text/utf8.hpp"

namespace msmon::tui {

namespace {

constexpr int ctrl(char c) {
    return c & 0x1F;
}

bool is_word(char c) {
    return c != ' ' && c != '/' && c != '.' && c != '_' && c != ':' && c != '-';
}

}  // namespace

LineEditor::LineEditor() {
    const auto act = [](auto f) {
        return [f]() {
            f();
            return Reaction::redraw;
        };
    };
    // One binding per line reads as a table.
    // clang-format off
    keys_ = {
        {{kKeyLeft}, "Left", "cursor left", act([this] { cursor_ = utf8_prev(text_, cursor_); })},
        {{kKeyRight}, "Right", "cursor right", act([this] { cursor_ = utf8_next(text_, cursor_); })},
        {{kKeyHome, ctrl('a')}, "Home/C-a", "to the start", act([this] { cursor_ = 0; })},
        {{kKeyEnd, ctrl('e')}, "End/C-e", "to the end", act([this] { cursor_ = text_.size(); })},
        {{kKeyBackspace}, "Bksp", "delete the character before the cursor", act([this] {
             const std::size_t from = utf8_prev(text_, cursor_);
             text_.erase(from, cursor_ - from);
             cursor_ = from;
         })},
        {{kKeyDelete, ctrl('d')}, "Del/C-d", "delete the character under the cursor", act([this] {
             text_.erase(cursor_, utf8_next(text_, cursor_) - cursor_);
         })},
        {{ctrl('u')}, "C-u", "delete to the start", act([this] {
             text_.erase(0, cursor_);
             cursor_ = 0;
         })},
        {{ctrl('k')}, "C-k", "delete to the end", act([this] { text_.erase(cursor_); })},
        {{ctrl('w')}, "C-w", "delete the word before the cursor", act([this] {
             std::size_t from = cursor_;
             while (from > 0 && !is_word(text_[from - 1])) --from;
             while (from > 0 && is_word(text_[from - 1])) --from;
             text_.erase(from, cursor_ - from);
             cursor_ = from;
         })},
        {{kKeyUp}, "Up", "the line entered before", act([this] { recall(-1); })},
        {{kKeyDown}, "Down", "the line entered after", act([this] { recall(+1); })},
    };
    // clang-format on
}

void LineEditor::start(std::string text) {
    text_ = std::move(text);
    cursor_ = text_.size();
    recalled_ = history_.size();
    draft_.clear();
}

void LineEditor::insert(char32_t cp) {
    std::string bytes;
    append_utf8(bytes, cp);
    text_.insert(cursor_, bytes);
    cursor_ += bytes.size();
}

void LineEditor::recall(int direction) {
    if (history_.empty()) return;
    if (recalled_ == history_.size()) draft_ = text_;
    if (direction < 0 && recalled_ > 0) --recalled_;
    else if (direction > 0 && recalled_ < history_.size()) ++recalled_;
    else return;
    text_ = recalled_ == history_.size() ? draft_ : history_[recalled_];
    cursor_ = text_.size();
}

bool LineEditor::edit(int key) {
    Reaction r = Reaction::none;
    if (dispatch(keys_, key, r)) return true;
    // Printable: not a control character, not one of the special keys (which start at 0x110000).
    if (key < 32 || key == 127 || key >= 0x110000 || (key >= 0x80 && key < 0xA0) || (key >= 0xD800 && key < 0xE000))
        return false;
    insert(static_cast<char32_t>(key));
    return true;
}

std::string LineEditor::commit() {
    if (!text_.empty() && (history_.empty() || history_.back() != text_)) history_.push_back(text_);
    recalled_ = history_.size();
    return text_;
}

void LineEditor::draw(ScreenBuffer& buf, int x, int y, int width, const std::string& prompt, Style style) const {
    const int used = buf.text(x, y, prompt, style, width);
    const int room = width - used - 1;  // one cell for the cursor past the end
    if (room <= 0) return;
    // Scroll: the text from the first code point that keeps the cursor within the room.
    std::size_t from = 0;
    while (display_width(std::string_view(text_).substr(from, cursor_ - from)) > room - 1 && from < cursor_)
        from = utf8_next(text_, from);
    const int before = buf.text(x + used, y, std::string_view(text_).substr(from, cursor_ - from), style, room);
    Style cursor_style = style;
    cursor_style.attr = static_cast<std::uint8_t>(cursor_style.attr | kReverse);
    const std::size_t next = utf8_next(text_, cursor_);
    const std::string under = cursor_ < text_.size() ? text_.substr(cursor_, next - cursor_) : std::string(" ");
    const int cw = buf.text(x + used + before, y, under, cursor_style, room - before + 1);
    if (next < text_.size())
        buf.text(x + used + before + cw, y, std::string_view(text_).substr(next), style, room - before - cw + 1);
}

}  // namespace msmon::tui
