// msmon-tui draws on a node that has no terminfo description of $TERM (a minimal image, a static msmon-tui copied
// to a node without ncurses-term, a terminal whose name the node does not know): it carries the common ones
// (xterm-256color, xterm, screen-256color, screen, tmux-256color, tmux, linux, vt100, embedded at build time by
// cmake/terminfo_blobs.cmake) and, when ncurses finds none for $TERM, writes the closest one to a private folder
// and points ncurses at it. A TERM it has nothing close to is a clear error naming TERM and the fix.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace msmon::tui {

struct TerminfoBlob {
    const char* name;
    const unsigned char* data;  // the compiled description, as tic writes it
    std::size_t size;
};

// The built-in descriptions (generated into the build).
const std::vector<TerminfoBlob>& builtin_terminfo();

// The built-in description that stands in for `term`: its own, else its family's (xterm-*, rxvt*, alacritty,
// kitty, foot, wezterm: xterm-256color or xterm; screen.*: screen-256color or screen; tmux-*: tmux-256color or tmux;
// linux*; vt1xx/vt2xx/ansi: vt100), or none.
const TerminfoBlob* stand_in_for(std::string_view term);

class TerminfoFallback {
public:
    TerminfoFallback() = default;
    TerminfoFallback(const TerminfoFallback&) = delete;
    TerminfoFallback& operator=(const TerminfoFallback&) = delete;
    ~TerminfoFallback();  // removes the private folder

    // Before curses starts. True when ncurses can describe $TERM (`note` says so if a stand-in was placed: TERM and
    // TERMINFO then name it); false with `error` for a person when it cannot.
    bool prepare(std::string& note, std::string& error);

private:
    std::string dir_;
};

}  // namespace msmon::tui
