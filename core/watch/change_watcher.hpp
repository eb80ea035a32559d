// Tells the engine which paths changed under the folders it watches: inotify or polling, one interface.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace msmon {

struct PathChange {
    std::string dir;   // the watched folder
    std::string name;  // entry in it; empty for the folder itself
    bool is_dir = false;
    bool removed = false;
};

class ChangeWatcher {
public:
    virtual ~ChangeWatcher() = default;
    // Starts watching a folder (not recursive). limit_reached: the inotify watch limit (fall back to polling);
    // failed: this folder cannot be watched (e.g. permission denied), `error` says why.
    enum class Add { ok, limit_reached, failed };
    virtual Add add_dir(const std::string& dir, std::string& error) = 0;
    virtual void remove_dir(const std::string& dir) = 0;
    // Waits up to timeout_ms for changes, or until wake() is called. Sets `rescan` when events were lost
    // (inotify queue overflow) and everything must be looked at again.
    virtual void wait(int timeout_ms, std::vector<PathChange>& out, bool& rescan) = 0;
    // Interrupts wait() from another thread or a signal handler context (async-signal-safe write).
    virtual void wake() = 0;
    // Every change made before this time has been reported by a wait() that returned.
    virtual std::chrono::steady_clock::time_point seen_until() const = 0;
    virtual const char* mode() const = 0;
};

std::unique_ptr<ChangeWatcher> make_inotify_watcher(std::string& error);
std::unique_ptr<ChangeWatcher> make_poll_watcher(int poll_ms);

// The filesystem type of a path when inotify cannot see other hosts' writes to it (NFS, Lustre, CIFS, ...),
// else an empty string.
std::string network_filesystem_name(const std::string& path);

}  // namespace msmon
