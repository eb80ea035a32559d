// The one line editor of msmon-tui: the `/` filter, the `:` command line and the Config tab's values.
// UTF-8 text; Left/Right, Home/End (Ctrl-A/E), Backspace, Delete (Ctrl-D), Ctrl-U (to the start), Ctrl-K (to the
// end), Ctrl-W (the word before), Up/Down through what was entered before (per editor: each prompt its history).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tui/key_table.hpp"
#include "tui/screen_buffer.hpp"

namespace msmon::tui {

class LineEditor {
public:
    LineEditor();
    LineEditor(const LineEditor&) = delete;  // its key table's handlers point at it
    LineEditor& operator=(const LineEditor&) = delete;
    // Starts editing `text`, the cursor at its end.
    void start(std::string text = {});
    // Applies an editing key; false if `key` is not one (Enter and Esc are the caller's).
    bool edit(int key);
    // Enter: the text, remembered in the history (unless empty or the same as the last).
    std::string commit();
    const std::string& text() const { return text_; }
    std::size_t cursor() const { return cursor_; }  // a byte offset at a code point boundary
    // Draws `prompt` and the text from column x, at most `width` columns, scrolled so that the cursor shows; the
    // cursor's cell is drawn reversed.
    void draw(ScreenBuffer& buf, int x, int y, int width, const std::string& prompt, Style style) const;
    // The keys edit() takes (typing a character is not in it), for help and the hint bar.
    const KeyTable& keys() const { return keys_; }

private:
    void insert(char32_t cp);
    void recall(int direction);
    KeyTable keys_;
    std::string text_;
    std::size_t cursor_ = 0;
    std::vector<std::string> history_;
    std::size_t recalled_ = 0;  // index into history_; history_.size(): the line being typed
    std::string draft_;         // the line being typed while an older one is recalled
};

}  // namespace msmon::tui
