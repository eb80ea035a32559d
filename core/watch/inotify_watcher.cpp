// inotify through glibc: one watch per folder (events name the file), never one per file.
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <unordered_map>

#include "core/watch/change_watcher.hpp"
#include "core/watch/wake_pipe.hpp"

namespace msmon {

namespace {

constexpr std::uint32_t kDirMask = IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
                                   IN_DELETE_SELF | IN_MOVE_SELF | IN_ATTRIB | IN_ONLYDIR;

class InotifyWatcher final : public ChangeWatcher {
public:
    explicit InotifyWatcher(int fd) : fd_(fd) {}
    ~InotifyWatcher() override { ::close(fd_); }

    Add add_dir(const std::string& dir, std::string& error) override {
        int wd = ::inotify_add_watch(fd_, dir.c_str(), kDirMask);
        if (wd < 0) {
            if (errno == ENOSPC) {
                error = "inotify watch limit reached (fs.inotify.max_user_watches)";
                return Add::limit_reached;
            }
            error = std::strerror(errno);
            return Add::failed;
        }
        dirs_[wd] = dir;
        wds_[dir] = wd;
        return Add::ok;
    }

    void remove_dir(const std::string& dir) override {
        auto it = wds_.find(dir);
        if (it == wds_.end()) return;
        ::inotify_rm_watch(fd_, it->second);
        dirs_.erase(it->second);
        wds_.erase(it);
    }

    void wait(int timeout_ms, std::vector<PathChange>& out, bool& rescan) override {
        // The queue is read until it is empty: an event queued before this call is reported by it.
        seen_until_ = std::chrono::steady_clock::now();
        pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_.fd(), POLLIN, 0}};
        int n = ::poll(fds, 2, timeout_ms);
        if (n <= 0) return;
        if (fds[1].revents & POLLIN) wake_.drain();
        if (!(fds[0].revents & POLLIN)) return;
        alignas(inotify_event) char buf[64 * 1024];
        while (true) {
            ssize_t len = ::read(fd_, buf, sizeof buf);
            if (len <= 0) break;
            for (char* p = buf; p < buf + len;) {
                auto* ev = reinterpret_cast<inotify_event*>(p);
                p += sizeof(inotify_event) + ev->len;
                if (ev->mask & IN_Q_OVERFLOW) {
                    rescan = true;
                    continue;
                }
                auto it = dirs_.find(ev->wd);
                if (it == dirs_.end()) continue;
                if (ev->mask & IN_IGNORED) {
                    wds_.erase(it->second);
                    dirs_.erase(it);
                    continue;
                }
                PathChange change;
                change.dir = it->second;
                change.name = ev->len ? std::string(ev->name) : std::string();
                change.is_dir = (ev->mask & IN_ISDIR) != 0;
                change.removed = (ev->mask & (IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF)) != 0;
                out.push_back(std::move(change));
            }
            pollfd again{fd_, POLLIN, 0};
            if (::poll(&again, 1, 0) <= 0) break;
        }
    }

    void wake() override { wake_.signal(); }
    const char* mode() const override { return "inotify"; }
    std::chrono::steady_clock::time_point seen_until() const override { return seen_until_; }

private:
    int fd_;
    std::chrono::steady_clock::time_point seen_until_{};
    WakeFd wake_;
    std::unordered_map<int, std::string> dirs_;
    std::unordered_map<std::string, int> wds_;
};

}  // namespace

std::unique_ptr<ChangeWatcher> make_inotify_watcher(std::string& error) {
    int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0) {
        error = std::string("inotify_init1: ") + std::strerror(errno);
        return nullptr;
    }
    return std::make_unique<InotifyWatcher>(fd);
}

}  // namespace msmon
