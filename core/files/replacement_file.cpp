// O_TMPFILE, linkat through /proc/self/fd, renameat; an O_EXCL temporary name where that cannot work.
#include "core/files/replacement_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

namespace msmon {

namespace {

std::string random_suffix() {
    static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    thread_local std::mt19937_64 rng{std::random_device{}()};
    std::string s(6, 'X');
    for (char& c : s) c = kChars[rng() % (sizeof kChars - 1)];
    return s;
}

}  // namespace

ReplacementFile::~ReplacementFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!temp_name_.empty()) ::unlinkat(dir_fd_, temp_name_.c_str(), 0);
    if (dir_fd_ >= 0) ::close(dir_fd_);
}

bool ReplacementFile::open(const std::string& dir, const std::string& base, std::string& error) {
    const int dir_fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) {
        error = "cannot open the folder " + dir + ": " + std::strerror(errno);
        return false;
    }
    const bool ok = open(dir_fd, dir, base, error);
    ::close(dir_fd);
    return ok;
}

bool ReplacementFile::open(int dir_fd, const std::string& dir, const std::string& base, std::string& error) {
    dir_ = dir;
    base_ = base;
    dir_fd_ = ::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
    if (dir_fd_ < 0) {
        error = "cannot use the folder " + dir + ": " + std::strerror(errno);
        return false;
    }
    // linkat needs /proc/self/fd to name the unnamed file (AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH).
    if (::access("/proc/self/fd", X_OK) == 0) {
        fd_ = ::openat(dir_fd_, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
        if (fd_ >= 0) {
            unnamed_ = true;
            return true;
        }
        // EOPNOTSUPP/EISDIR/EINVAL: a filesystem (NFS, old kernels) without O_TMPFILE; anything else is said below.
    }
    for (int attempt = 0; fd_ < 0; ++attempt) {
        const std::string name = "." + base + ".msmon-" + random_suffix();
        fd_ = ::openat(dir_fd_, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd_ >= 0) {
            temp_name_ = name;
        } else if (errno != EEXIST || attempt >= 100) {
            error = "cannot create a temporary file in " + dir + ": " + std::strerror(errno);
            return false;
        }
    }
    return true;
}

bool ReplacementFile::write_all(const std::string& text, std::string& error) {
    for (std::size_t off = 0; off < text.size();) {
        const ssize_t n = ::write(fd_, text.data() + off, text.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            error = std::string("cannot write the new ") + base_ + ": " + std::strerror(n < 0 ? errno : ENOSPC);
            return false;
        }
        off += static_cast<std::size_t>(n);
    }
    return true;
}

bool ReplacementFile::replace(std::string& error) {
    if (unnamed_) {
        const std::string proc = "/proc/self/fd/" + std::to_string(fd_);
        for (int attempt = 0; temp_name_.empty(); ++attempt) {
            const std::string name = "." + base_ + ".msmon-" + random_suffix();
            if (::linkat(AT_FDCWD, proc.c_str(), dir_fd_, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
                temp_name_ = name;
            } else if (errno != EEXIST || attempt >= 100) {
                error = "cannot give the new " + base_ + " a name in " + dir_ + ": " + std::strerror(errno);
                return false;
            }
        }
    }
    if (::renameat(dir_fd_, temp_name_.c_str(), dir_fd_, base_.c_str()) != 0) {
        error = "cannot replace " + (dir_ == "/" ? "" : dir_) + "/" + base_ + ": " + std::strerror(errno);
        return false;  // the destructor removes the temp name
    }
    temp_name_.clear();
    return true;
}

}  // namespace msmon
