// Store paths are a hash of the canonical folder list, so the same job always maps to the same store.
#include "store/store_location.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>

#include "core/log/logging.hpp"
#include "core/tail/file_tailer.hpp"

namespace msmon {

std::string default_store_path(const std::vector<std::string>& monitored_dirs) {
    std::vector<std::string> canon;
    for (const auto& d : monitored_dirs) {
        char buf[PATH_MAX];
        canon.emplace_back(::realpath(d.c_str(), buf) ? buf : d);
    }
    std::sort(canon.begin(), canon.end());
    std::string joined;
    for (const auto& c : canon) joined += c + '\n';
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx",
                  static_cast<unsigned long long>(fingerprint_hash(joined.data(), joined.size())));
    return cache_dir() + "/" + hex + ".db";
}

StoreWriterLock::StoreWriterLock(const std::string& store_path) {
    const std::string path = store_path + ".lock";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
        holder_ = "cannot open " + path;
        return;
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) {
        held_ = true;
        const std::string pid = std::to_string(::getpid()) + "\n";
        if (::ftruncate(fd_, 0) == 0) {
            [[maybe_unused]] auto n = ::pwrite(fd_, pid.data(), pid.size(), 0);
        }
        return;
    }
    char buf[32] = {};
    const auto n = ::pread(fd_, buf, sizeof buf - 1, 0);
    std::string pid = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    holder_ = pid.empty() ? "another process" : "pid " + pid;
}

StoreWriterLock::~StoreWriterLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the flock
}

}  // namespace msmon
