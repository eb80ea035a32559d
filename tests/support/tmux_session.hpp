// Drives a real terminal: a program in a private tmux server, keys in with send-keys, the screen out with
// capture-pane. When the program is msmon-tui, the session waits on the program itself: msmon-tui reports its
// frames and idle points to a file (tui/idle_report.hpp), and settle() returns once every key sent and every
// file written before it has been handled and drawn.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/program_report.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {

class TmuxSession {
public:
    // Starts `command` (a shell command line) in a width×height pane with the given environment.
    TmuxSession(const std::string& command, int width, int height, const std::map<std::string, std::string>& env);
    // Ends the program (SIGTERM to its process group) and waits for every process of the pane to exit; one still
    // there after exit_limit() is killed, and the test fails. Then kills the private server.
    ~TmuxSession();
    static bool available();
    // How long a program may take to exit once asked (longer under the sanitizers, whose exit checks are slow).
    static std::chrono::milliseconds exit_limit();

    // What settle() waits for, beyond the keys and files.
    enum class Wait {
        keys,    // every key sent before the call is handled and drawn (a live job may keep ingest busy)
        input,   // every key sent and every file change made before the call is handled and drawn
        timers,  // that, and nothing held for later: no finding held for a rank's next step, no new incident
                 // waiting to settle (its announcement made)
    };
    // Waits on the program (msmon-tui only; any other program: returns true at once): true once it is idle as
    // `what` says and the terminal shows its last frame; false after `timeout`, the reason in last_wait_error().
    bool settle(Wait what = Wait::input, std::chrono::milliseconds timeout = settle_limit()) const;
    static std::chrono::milliseconds settle_limit();
    // settle(), then the screen: what a "nothing else happened" check reads. A program that does not settle is a
    // test failure, with the reason.
    std::string settled(Wait what = Wait::input) const;
    // The same screen with its attributes (capture_styled()).
    std::string settled_styled(Wait what = Wait::input) const;
    // Waits until the program draws a frame after the ones drawn so far (its idle refresh comes every 1-2 s).
    bool next_frame(std::chrono::milliseconds timeout = settle_limit()) const;
    // The program's newest idle point (settle() reads it), if it reports them.
    std::optional<IdlePoint> idle_point() const;
    const std::string& last_wait_error() const { return wait_error_; }

    void send_keys(const std::string& keys, bool literal = false);
    void resize(int width, int height);
    // The visible screen as text (lines joined by '\n'). With msmon-tui, a whole frame: taken while the terminal
    // shows the program's last finished frame and before it begins another (tmux can hold half of a frame).
    std::string capture() const;
    // The visible screen with its attributes as SGR escape sequences (capture-pane -e): what plain text
    // cannot show, such as which row is highlighted (reverse video) or which series are drawn faint (dim).
    std::string capture_styled() const;
    // Waits until the screen contains `text`; returns the screen, or "" on timeout. With msmon-tui, the screen
    // is checked once the program has handled the keys sent (Wait::keys: a job written faster than a sanitized
    // build reads it never leaves ingest idle) and then at each frame it draws; another program's screen is
    // looked at every 30 ms and returned once it held still (tmux can show half of a frame).
    std::string wait_for(const std::string& text, std::chrono::milliseconds timeout) const;
    // The same for any condition on the screen: the first screen on which `ok` holds; on timeout, the last screen
    // seen, for the failure message.
    std::string screen_when(const std::function<bool(const std::string&)>& ok, std::chrono::milliseconds timeout) const;
    // The first screen that shows `text`, looked at every 30 ms whether or not the program has settled ("" on
    // timeout): for a test that acts on a busy program at a moment of its own (a kill once the first frame is up).
    std::string busy_screen_with(const std::string& text, std::chrono::milliseconds timeout) const;
    bool alive() const;
    // The processes of the pane that have not exited (the program, and the shell that started it).
    std::vector<long> processes() const;
    // Waits until every process of the pane has exited (the program quit); false after `timeout`.
    bool wait_exit(std::chrono::milliseconds timeout = exit_limit()) const;
    // Appends every byte the program writes to the terminal to `path` (tmux pipe-pane), from now on.
    void record_output(const std::string& path);
    // Quits the program (q), waits for it to exit and for the recording at `path` to end with the terminal given
    // back (the alternate screen left), and returns what was recorded without the sync markers; nullopt, the
    // reason in last_wait_error(), if either does not happen.
    std::optional<std::string> output_after_quit(const std::string& path);

private:
    std::string tmux(const std::string& args) const;
    // Waits until tmux has processed what the program wrote up to its title marker for `sync` and `frames`.
    bool terminal_shows(std::uint64_t sync, std::uint64_t frames, std::chrono::steady_clock::time_point deadline) const;
    // capture-pane with `options`; with msmon-tui, of a whole frame (capture()).
    std::string whole_frame(const std::string& options) const;
    std::string poll_screen(const std::function<bool(const std::string&)>& ok,
                            std::chrono::steady_clock::time_point deadline) const;
    void end_program();
    std::string socket_;
    std::string report_dir_;                 // the program's report file's folder (msmon-tui), else empty
    std::unique_ptr<ProgramReport> report_;  // null: the program is not msmon-tui
    mutable std::uint64_t syncs_sent_ = 0;
    mutable std::string wait_error_;
    long pane_pid_ = -1;
};

// SGR attributes as capture_styled() reports them.
enum class Sgr { bold = 1, dim = 2, reverse = 7 };

// For each line of a capture_styled() screen, its runs of text drawn with `attribute` on, left to right. The
// whole screen, not a line alone: tmux carries attributes from one line into the next without repeating them.
std::vector<std::vector<std::string>> styled_runs(const std::string& styled_screen, Sgr attribute);

// A capture_styled() screen as plain text (the escape sequences removed).
std::string plain_text(const std::string& styled);

// Terminal bytes (record_output()) without the title sequences that mark msmon-tui's sync points for a test.
std::string without_sync_markers(const std::string& bytes);

// A screen's lines (capture() joins them with '\n').
std::vector<std::string> lines_of(const std::string& screen);

// The environment a TUI test runs msmon-tui in: a UTF-8 locale, a 256-colour terminal, and its state and cache
// folders under `tmp` (never the user's).
std::map<std::string, std::string> tmux_env(const TempDir& tmp);

}  // namespace msmon::test
