// The program's report, read as it grows: inotify on its folder wakes the reader on every write.
#include "tests/support/program_report.hpp"

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace msmon::test {

namespace {

long long field(const std::string& line, const std::string& key) {
    const auto at = line.find(" " + key + "=");
    if (at == std::string::npos) return -2;
    const std::string v = line.substr(at + key.size() + 2, line.find(' ', at + 1) - at - key.size() - 2);
    if (v == "-") return -1;
    return std::stoll(v);
}

}  // namespace

std::optional<IdlePoint> parse_idle_line(const std::string& line) {
    if (line.rfind("idle ", 0) != 0) return std::nullopt;
    IdlePoint p;
    const std::string l = line.substr(4);  // keeps the space before the first key
    p.t = field(l, "t");
    p.frames = static_cast<std::uint64_t>(field(l, "frames"));
    p.sync = static_cast<std::uint64_t>(field(l, "sync"));
    p.ingest = field(l, "ingest");
    p.held = field(l, "held");
    p.settle = field(l, "settle");
    p.notice = field(l, "notice");
    p.notified = static_cast<std::uint64_t>(field(l, "notified"));
    return p;
}

ProgramReport::ProgramReport(std::string path) : path_(std::move(path)) {
    inotify_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    const std::string dir = std::filesystem::path(path_).parent_path().string();
    if (inotify_ >= 0) ::inotify_add_watch(inotify_, dir.c_str(), IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE);
}

ProgramReport::~ProgramReport() {
    if (inotify_ >= 0) ::close(inotify_);
}

bool ProgramReport::started() const {
    return std::filesystem::exists(path_);
}

void ProgramReport::read_new() {
    std::ifstream in(path_, std::ios::binary);
    if (!in) return;
    in.seekg(static_cast<std::streamoff>(offset_));
    std::ostringstream more;
    more << in.rdbuf();
    const std::string bytes = more.str();
    offset_ += bytes.size();
    pending_ += bytes;
    std::size_t start = 0;
    for (std::size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1) {
        const std::string line = pending_.substr(start, nl - start);
        if (line.rfind("frame ", 0) == 0) ++frames_;
        if (line.rfind("draw ", 0) == 0) ++frames_begun_;
        if (line.rfind("end ", 0) == 0) ended_ = true;
        if (auto p = parse_idle_line(line)) last_idle_ = p;
    }
    pending_.erase(0, start);
}

bool ProgramReport::wait_change(std::chrono::steady_clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return false;
    // inotify tells of the next write; without it (no inotify here), look again every 20 ms.
    pollfd p{inotify_, POLLIN, 0};
    const int n =
        ::poll(&p, inotify_ >= 0 ? 1 : 0, static_cast<int>(std::min<long long>(left, inotify_ >= 0 ? left : 20)));
    if (n > 0) {
        char buf[4096];
        while (::read(inotify_, buf, sizeof buf) > 0) {
        }
    }
    return true;
}

std::optional<IdlePoint> ProgramReport::wait_idle(const std::function<bool(const IdlePoint&)>& ok,
                                                  std::chrono::steady_clock::time_point deadline) {
    do {
        read_new();
        if (last_idle_ && ok(*last_idle_)) return last_idle_;
    } while (wait_change(deadline));
    return std::nullopt;
}

bool ProgramReport::wait_frame_after(std::uint64_t frames, std::chrono::steady_clock::time_point deadline) {
    do {
        read_new();
        if (frames_ > frames) return true;
        if (ended_) return false;
    } while (wait_change(deadline));
    return false;
}

}  // namespace msmon::test
