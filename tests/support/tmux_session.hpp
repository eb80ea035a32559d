// Drives a real terminal: a program in a private tmux server, keys in with send-keys, the screen out with
// capture-pane.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tests/support/test_env.hpp"

namespace msmon::test {

class TmuxSession {
public:
    // Starts `command` (a shell command line) in a width×height pane with the given environment.
    TmuxSession(const std::string& command, int width, int height, const std::map<std::string, std::string>& env);
    ~TmuxSession();  // kills the private server
    static bool available();

    void send_keys(const std::string& keys, bool literal = false);
    void resize(int width, int height);
    // The visible screen as text (lines joined by '\n').
    std::string capture() const;
    // The visible screen with its attributes as SGR escape sequences (capture-pane -e): what plain text
    // cannot show, such as which row is highlighted (reverse video) or which series are drawn faint (dim).
    std::string capture_styled() const;
    // Waits until the screen contains `text`; returns the screen, or "" on timeout. The screen returned is
    // one that held still for a moment where possible: tmux can show half of a frame (a line redrawn, the
    // rest not yet).
    std::string wait_for(const std::string& text, std::chrono::milliseconds timeout) const;
    // The same for any condition on the screen: the first screen on which `ok` holds, once it held still (or
    // the last one on which `ok` holds while it did not); on timeout, the last screen seen, for the failure
    // message.
    std::string screen_when(const std::function<bool(const std::string&)>& ok, std::chrono::milliseconds timeout) const;
    bool alive() const;
    // Appends every byte the program writes to the terminal to `path` (tmux pipe-pane), from now on.
    void record_output(const std::string& path);

private:
    std::string tmux(const std::string& args) const;
    std::string socket_;
};

// SGR attributes as capture_styled() reports them.
enum class Sgr { bold = 1, dim = 2, reverse = 7 };

// For each line of a capture_styled() screen, its runs of text drawn with `attribute` on, left to right. The
// whole screen, not a line alone: tmux carries attributes from one line into the next without repeating them.
std::vector<std::vector<std::string>> styled_runs(const std::string& styled_screen, Sgr attribute);

// A capture_styled() screen as plain text (the escape sequences removed).
std::string plain_text(const std::string& styled);

// A screen's lines (capture() joins them with '\n').
std::vector<std::string> lines_of(const std::string& screen);

// The environment a TUI test runs msmon-tui in: a UTF-8 locale, a 256-colour terminal, and its state and cache
// folders under `tmp` (never the user's).
std::map<std::string, std::string> tmux_env(const TempDir& tmp);

}  // namespace msmon::test
