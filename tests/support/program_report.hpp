// Reads what msmon-tui reports of itself to a test (MSMON_TUI_EVENTS, tui/idle_report.hpp): its frames and its
// idle points. Waiting is on the file itself (inotify), so a test wakes when the program writes, not on a clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace msmon::test {

// One "idle" line. Times are steady_clock nanoseconds; -1 stands for "-".
struct IdlePoint {
    long long t = 0;
    std::uint64_t frames = 0;
    std::uint64_t sync = 0;
    long long ingest = -1;  // every file change before this is drawn; -1: the program does not ingest
    long long held = -1;    // ingest holds findings for a rank's next step until then; -1: none held
    long long settle = -1;  // an incident waits to settle until then; -1: none waits
    long long notice = -1;  // the new-incident notice shows until then; -1: none shows
    std::uint64_t notified = 0;
};

// Parses an idle line; nullopt for any other line.
std::optional<IdlePoint> parse_idle_line(const std::string& line);

class ProgramReport {
public:
    explicit ProgramReport(std::string path);
    ~ProgramReport();
    ProgramReport(const ProgramReport&) = delete;
    ProgramReport& operator=(const ProgramReport&) = delete;
    const std::string& path() const { return path_; }

    // Waits until an idle line satisfies `ok` (lines already read count too, the newest first); returns it, or
    // nullopt at the deadline.
    std::optional<IdlePoint> wait_idle(const std::function<bool(const IdlePoint&)>& ok,
                                       std::chrono::steady_clock::time_point deadline);
    // Waits until the program has drawn more than `frames` frames; false at the deadline or once it quit.
    bool wait_frame_after(std::uint64_t frames, std::chrono::steady_clock::time_point deadline);
    // Reads what the program wrote since the last look.
    void refresh() { read_new(); }
    // The newest idle line read so far, how many frames were reported drawn, and how many begun (one more than
    // drawn while a frame is being written to the terminal).
    std::optional<IdlePoint> last_idle() const { return last_idle_; }
    std::uint64_t frames() const { return frames_; }
    std::uint64_t frames_begun() const { return frames_begun_; }
    // Whether the program said it gave the terminal back (it quit): nothing more comes.
    bool ended() const { return ended_; }
    // Whether the program has opened the file yet.
    bool started() const;

private:
    void read_new();
    bool wait_change(std::chrono::steady_clock::time_point deadline);

    std::string path_;
    int inotify_ = -1;
    std::string pending_;  // a line not yet ended
    std::uint64_t offset_ = 0;
    std::uint64_t frames_ = 0;
    std::uint64_t frames_begun_ = 0;
    bool ended_ = false;
    std::optional<IdlePoint> last_idle_;
};

}  // namespace msmon::test
