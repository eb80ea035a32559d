// The terminal: ncurses set up and torn down (RAII), capabilities (UTF-8, colours), key input, and copying a
// finished ScreenBuffer to the screen. The only file that includes curses.
#pragma once

#include <string>

#include "tui/key_table.hpp"
#include "tui/screen_buffer.hpp"

namespace msmon::tui {

struct MouseEvent {
    int x = 0, y = 0;
};

class Terminal {
public:
    // Takes over the terminal; `colours` false: monochrome whatever the terminal can (the settings' theme "mono").
    explicit Terminal(bool colours = true);
    ~Terminal();  // restores it
    Terminal(const Terminal&) = delete;
    Terminal& operator=(const Terminal&) = delete;

    int width() const;
    int height() const;
    const Glyphs& glyphs() const { return glyphs_; }
    bool colors() const { return colors_; }
    // Copies the buffer to the screen (only what changed since the last present reaches the terminal).
    void present(const ScreenBuffer& buf);
    // Next key without waiting; kKeyNone when there is none.
    int read_key(MouseEvent& mouse);
    int input_fd() const { return 0; }
    // Writes `bytes` (a bell, an OSC notification) straight to the terminal, after what curses has drawn.
    void write_raw(const std::string& bytes);

private:
    int attr_for(const Style& s) const;
    Glyphs glyphs_;
    bool colors_ = false;
};

}  // namespace msmon::tui
