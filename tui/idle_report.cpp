// The test-only report of frames and idleness: a file opened once, appended to with one write() per line.
#include "tui/idle_report.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace msmon::tui {

namespace {

std::string ns_text(std::optional<IdleReport::Clock::time_point> t) {
    if (!t) return "-";
    return std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(t->time_since_epoch()).count());
}

}  // namespace

std::unique_ptr<IdleReport> IdleReport::from_environment(std::string& error) {
    const char* path = std::getenv(kEnvironment);
    if (!path || !*path) return nullptr;
    const int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
    if (fd < 0) {
        error = std::string("cannot open ") + kEnvironment + " '" + path + "': " + std::strerror(errno);
        return nullptr;
    }
    return std::unique_ptr<IdleReport>(new IdleReport(fd));
}

IdleReport::~IdleReport() {
    ::close(fd_);
}

void IdleReport::write_line(const std::string& line) {
    [[maybe_unused]] auto n = ::write(fd_, line.data(), line.size());
}

std::string IdleReport::terminal_marker() {
    if (syncs_ == marked_syncs_ && frames_ == marked_frames_) return "";
    marked_syncs_ = syncs_;
    marked_frames_ = frames_;
    return "\x1b]2;msmon-sync-" + std::to_string(syncs_) + " frame-" + std::to_string(frames_) + "\x1b\\";
}

void IdleReport::frame_begins(Clock::time_point now) {
    write_line("draw " + std::to_string(frames_ + 1) + " t=" + ns_text(now) + "\n");
}

void IdleReport::frame(Clock::time_point now) {
    ++frames_;
    write_line("frame " + std::to_string(frames_) + " t=" + ns_text(now) + "\n");
}

void IdleReport::ended(Clock::time_point now) {
    write_line("end t=" + ns_text(now) + "\n");
}

void IdleReport::idle(const State& s, Clock::time_point now) {
    std::string body = "frames=" + std::to_string(frames_) + " sync=" + std::to_string(syncs_) +
                       " ingest=" + ns_text(s.ingest_seen) + " held=" + ns_text(s.held_until) +
                       " settle=" + ns_text(s.settle_due) + " notice=" + ns_text(s.notice_until) +
                       " notified=" + std::to_string(s.notified);
    if (body == last_idle_) return;
    write_line("idle t=" + ns_text(now) + " " + body + "\n");
    last_idle_ = std::move(body);
}

}  // namespace msmon::tui
