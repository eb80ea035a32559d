// Polling: list each watched folder every poll_ms and compare size, mtime and inode of its entries (as hashes).
#include <dirent.h>
#include <poll.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <string_view>
#include <vector>

#include "core/watch/change_watcher.hpp"
#include "core/watch/wake_pipe.hpp"

namespace msmon {

namespace {

// What one listing of a folder holds, 16 bytes per entry (200,000 files: 3 MB): each name's hash and a hash of
// its size, mtime, inode and type, sorted by name hash. Names are kept only for sub-folders, the one removal the
// engine acts on (a file that is gone needs nothing: its stored values stay).
struct Entry {
    std::uint64_t name_hash = 0;
    std::uint64_t state_hash = 0;
    bool operator<(const Entry& o) const { return name_hash < o.name_hash; }
};
struct DirSnapshot {
    std::vector<Entry> entries;
    std::vector<std::string> subdirs;
};

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

// `err`: 0, or the errno of opening the folder. ENOENT/ENOTDIR mean it is gone; anything else (a folder that
// denies reading) means it is still there. `changed`, if given, gets the names whose state differs from `before`.
DirSnapshot list_dir(const std::string& dir, int& err, const DirSnapshot* before = nullptr,
                     std::vector<std::pair<std::string, bool>>* changed = nullptr) {
    DirSnapshot snap;
    DIR* d = ::opendir(dir.c_str());
    err = d ? 0 : errno;
    if (!d) return snap;
    std::string path = dir + "/";
    const std::size_t base = path.size();
    while (dirent* e = ::readdir(d)) {
        const std::string_view name = e->d_name;
        if (name == "." || name == "..") continue;
        path.resize(base);
        path.append(name);
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0) continue;
        const bool is_dir = S_ISDIR(st.st_mode);
        Entry entry;
        entry.name_hash = std::hash<std::string_view>{}(name);
        std::uint64_t h = mix(0, is_dir);
        if (!is_dir) {
            h = mix(h, static_cast<std::uint64_t>(st.st_size));
            h = mix(h, static_cast<std::uint64_t>(st.st_mtim.tv_sec) * 1000000000ULL +
                           static_cast<std::uint64_t>(st.st_mtim.tv_nsec));
        }
        entry.state_hash = mix(h, static_cast<std::uint64_t>(st.st_ino));
        snap.entries.push_back(entry);
        if (is_dir) snap.subdirs.emplace_back(name);
        if (changed && before) {
            const auto it = std::lower_bound(before->entries.begin(), before->entries.end(), entry);
            if (it == before->entries.end() || it->name_hash != entry.name_hash || it->state_hash != entry.state_hash)
                changed->emplace_back(std::string(name), is_dir);
        }
    }
    ::closedir(d);
    std::sort(snap.entries.begin(), snap.entries.end());
    snap.entries.shrink_to_fit();
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
    // A scan sees what was written before it began.
    std::chrono::steady_clock::time_point seen_until() const override { return last_scan_; }

    void wake() override { wake_.signal(); }
    const char* mode() const override { return "polling"; }

private:
    void scan(std::vector<PathChange>& out) {
        std::vector<std::string> gone;
        std::vector<std::pair<std::string, bool>> changed;
        for (auto& [dir, before] : dirs_) {
            int err = 0;
            changed.clear();
            DirSnapshot now = list_dir(dir, err, &before, &changed);
            if (err == ENOENT || err == ENOTDIR) {
                gone.push_back(dir);
                out.push_back({dir, "", true, true});
                continue;
            }
            if (err != 0) continue;  // e.g. permission taken away: keep what we knew, look again next time
            for (auto& [name, is_dir] : changed) out.push_back({dir, std::move(name), is_dir, false});
            for (const auto& sub : before.subdirs)
                if (std::find(now.subdirs.begin(), now.subdirs.end(), sub) == now.subdirs.end())
                    out.push_back({dir, sub, true, true});
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

std::unique_ptr<ChangeWatcher> make_poll_watcher(int poll_ms) {
    return std::make_unique<PollWatcher>(poll_ms);
}

}  // namespace msmon
