// Store paths are a hash of the canonical folder list, so the same job always maps to the same store.
#include "store/store_location.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/files/folder_trust.hpp"
#include "core/files/pinned_file.hpp"
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

std::optional<std::string> resolve_store_path(const std::string& path, const StoreAccess& access, bool create_folder,
                                              std::string& error) {
    if (path.empty()) {
        error = "no store path";
        return std::nullopt;
    }
    if (create_folder) {
        const auto slash = path.find_last_of('/');
        if (slash != std::string::npos && slash > 0) make_dirs(path.substr(0, slash));
    }
    const auto pinned =
        PinnedFile::pin(path, access.trust_folder ? LinkPolicy::any : LinkPolicy::trusted, kTrustDbFolderOption, error);
    if (!pinned) {
        error = "refusing the store " + path + ": " + error;
        return std::nullopt;
    }
    struct stat st {};
    if (pinned->stat_now(st) && S_ISDIR(st.st_mode)) {
        error = "'" + path + "' is a folder; --db names the store's file (e.g. " + pinned->real_path() + "/msmon.db)";
        return std::nullopt;
    }
    if (!access.trust_folder) {
        if (const std::string why = folder_trust_problem(pinned->folder_path()); !why.empty()) {
            error = "refusing the store " + pinned->real_path() + ": " + why +
                    ", so others could plant its -wal, -shm or lock file there. Keep stores in a folder only you (or "
                    "root) can write, e.g. the default one in $XDG_CACHE_HOME/msmon (chmod go-w it if it is yours), "
                    "or add " +
                    kTrustDbFolderOption + " if you trust everyone who can write it";
            return std::nullopt;
        }
    }
    return pinned->real_path();
}

std::string store_lock_path(const std::string& real_store_path) {
    return real_store_path + ".lock";
}

StoreWriterLock::StoreWriterLock(const std::string& real_store_path) {
    const std::string path = store_lock_path(real_store_path);
    // New, or the one a previous writer left; never through a link, never blocking on a FIFO.
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0 && errno == EEXIST) fd_ = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) {
        problem_ = errno == ELOOP
                       ? path + " is a symbolic link (planted?): msmon does not write through it; remove it"
                       : "cannot open or create the store's lock file " + path + ": " + std::strerror(errno) +
                             (errno == EROFS || errno == EACCES
                                  ? " (a writer needs a folder it can write; readers need no lock)"
                                  : "");
        return;
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
        problem_ = path +
                   (S_ISREG(st.st_mode) ? " has another name too (a hard link, planted?)"
                                        : " is not a plain file (planted?)") +
                   ": msmon does not write it; remove it";
        ::close(fd_);
        fd_ = -1;
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
