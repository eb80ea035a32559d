// Polling: list each watched folder every poll_ms and compare size, mtime and inode of its entries.
#include <dirent.h>
#include <poll.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <unordered_map>

#include "core/watch/change_watcher.hpp"
#include "core/watch/wake_pipe.hpp"

namespace msmon {

namespace {

struct EntryState {
    std::int64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::uint64_t ino = 0;
    bool is_dir = false;
    bool operator==(const EntryState&) const = default;
};

using DirSnapshot = std::unordered_map<std::string, EntryState>;

// `err`: 0, or the errno of opening the folder. ENOENT/ENOTDIR mean it is gone; anything else (a folder that
// denies reading) means it is still there.
DirSnapshot list_dir(const std::string& dir, int& err) {
    DirSnapshot snap;
    DIR* d = ::opendir(dir.c_str());
    err = d ? 0 : errno;
    if (!d) return snap;
    while (dirent* e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        struct stat st {};
        if (::stat((dir + "/" + name).c_str(), &st) != 0) continue;
        EntryState s;
        s.is_dir = S_ISDIR(st.st_mode);
        s.size = s.is_dir ? 0 : static_cast<std::int64_t>(st.st_size);
        s.mtime_ns = s.is_dir ? 0 : static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
        s.ino = static_cast<std::uint64_t>(st.st_ino);
        snap.emplace(std::move(name), s);
    }
    ::closedir(d);
    return snap;
}

class PollWatcher final : public ChangeWatcher {
public:
    explicit PollWatcher(int poll_ms) : poll_ms_(poll_ms > 0 ? poll_ms : 1000) {}

    Add add_dir(const std::string& dir, std::string& error) override {
        int err = 0;
        DirSnapshot snap = list_dir(dir, err);
        if (err != 0) {
            error = std::strerror(err);
            return Add::failed;
        }
        dirs_[dir] = std::move(snap);
        return Add::ok;
    }
    void remove_dir(const std::string& dir) override { dirs_.erase(dir); }

    void wait(int timeout_ms, std::vector<PathChange>& out, bool&) override {
        using clock = std::chrono::steady_clock;
        const auto now = clock::now();
        const auto due = last_scan_ + std::chrono::milliseconds(poll_ms_);
        if (now < due) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(due - now).count();
            int wait_ms = static_cast<int>(left);
            if (timeout_ms >= 0 && timeout_ms < wait_ms) wait_ms = timeout_ms;
            pollfd p{wake_.fd(), POLLIN, 0};
            if (::poll(&p, 1, wait_ms) > 0) {
                wake_.drain();
                return;
            }
            if (clock::now() < due) return;
        }
        last_scan_ = clock::now();
        scan(out);
    }

    void wake() override { wake_.signal(); }
    const char* mode() const override { return "polling"; }

private:
    void scan(std::vector<PathChange>& out) {
        std::vector<std::string> gone;
        for (auto& [dir, before] : dirs_) {
            int err = 0;
            DirSnapshot now = list_dir(dir, err);
            if (err == ENOENT || err == ENOTDIR) {
                gone.push_back(dir);
                out.push_back({dir, "", true, true});
                continue;
            }
            if (err != 0) continue;  // e.g. permission taken away: keep what we knew, look again next time
            for (const auto& [name, st] : now) {
                auto it = before.find(name);
                if (it == before.end() || !(it->second == st)) out.push_back({dir, name, st.is_dir, false});
            }
            for (const auto& [name, st] : before)
                if (!now.count(name)) out.push_back({dir, name, st.is_dir, true});
            before = std::move(now);
        }
        for (const auto& d : gone) dirs_.erase(d);
    }

    int poll_ms_;
    WakeFd wake_;
    std::map<std::string, DirSnapshot> dirs_;
    std::chrono::steady_clock::time_point last_scan_{};
};

}  // namespace

std::unique_ptr<ChangeWatcher> make_poll_watcher(int poll_ms) { return std::make_unique<PollWatcher>(poll_ms); }

}  // namespace msmon
