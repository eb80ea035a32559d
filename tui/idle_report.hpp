// What msmon-tui tells a test that drives it, when MSMON_TUI_EVENTS names a file (only tests set it): each frame
// it draws, and each time it is idle, with nothing left to read, settle or draw, what it has caught up to and
// when its next timer is due. Tests wait on these lines instead of sleeping (tests/support/tmux_session.hpp).
// One line each, appended:
//   draw N t=NS        before frame N's first byte goes to the terminal
//   frame N t=NS       once frame N is written whole
//   end t=NS           once the terminal is given back (the program quits): no frame comes after it
//   idle t=NS frames=N sync=K ingest=NS|- held=NS|- settle=NS|- notice=NS|- notified=M
// Times are the monotonic clock in nanoseconds (std::chrono::steady_clock, the tests' clock too).
//   sync:     how many sync keys (Ctrl-], bound to nothing) were read; every key sent before them was handled
//   ingest:   every file change made before this time is read, committed and drawn; "-" when not ingesting
//   held:     ingest holds findings for a rank's next step until then (then stores them); "-" when it holds none
//   settle:   a new incident waits to settle until then, and is announced after it; "-" when none waits
//   notice:   the status line shows "new incident: ..." until then; "-" when it shows none
//   notified: notifications (bell, OSC 9/777) written to the terminal so far
// After each frame, and when idle after a sync key, it sets the terminal's title to "msmon-sync-K frame-N" (OSC 2):
// a terminal showing that title has processed frame N whole. A test reads the title back (tmux's #{pane_title}):
// idle after sync K with N frames drawn and the title at frame N, the screen it captures is the program's last;
// and a capture taken while the title shows frame N, with no "draw N+1" written by the end of it, is frame N whole,
// never half of the next one (tests/support/tmux_session.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace msmon::tui {

class IdleReport {
public:
    using Clock = std::chrono::steady_clock;
    static constexpr const char* kEnvironment = "MSMON_TUI_EVENTS";
    static constexpr int kSyncKey = 0x1d;  // Ctrl-]

    // The report MSMON_TUI_EVENTS asks for; null when it is unset. Sets `error` when the file can't be opened.
    static std::unique_ptr<IdleReport> from_environment(std::string& error);
    ~IdleReport();
    IdleReport(const IdleReport&) = delete;
    IdleReport& operator=(const IdleReport&) = delete;

    struct State {
        std::optional<Clock::time_point> ingest_seen;
        std::optional<Clock::time_point> held_until;
        std::optional<Clock::time_point> settle_due;
        std::optional<Clock::time_point> notice_until;
        std::uint64_t notified = 0;
    };

    void sync_key() { ++syncs_; }
    // Around each frame's output: before its first byte, and once it is written.
    void frame_begins(Clock::time_point now);
    void frame(Clock::time_point now);
    void ended(Clock::time_point now);
    // Written when it says something the previous idle line did not (its time aside).
    void idle(const State& state, Clock::time_point now);
    // The title sequence that marks the syncs read and the frames drawn so far; "" when it would say nothing new.
    std::string terminal_marker();

private:
    explicit IdleReport(int fd) : fd_(fd) {}
    void write_line(const std::string& line);

    int fd_;
    std::uint64_t frames_ = 0, syncs_ = 0, marked_syncs_ = 0, marked_frames_ = 0;
    std::string last_idle_;
};

}  // namespace msmon::tui
