// O_TMPFILE, linkat through /proc/self/fd, rename; mkstemp where that cannot work.
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
    if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
}

bool ReplacementFile::open(const std::string& dir, const std::string& base, std::string& error) {
    dir_ = dir;
    base_ = base;
    // linkat needs /proc/self/fd to name the unnamed file (AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH).
    if (::access("/proc/self/fd", X_OK) == 0) {
        fd_ = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
        if (fd_ >= 0) {
            unnamed_ = true;
            return true;
        }
        // EOPNOTSUPP/EISDIR/EINVAL: a filesystem (NFS, old kernels) without O_TMPFILE; anything else is said below.
    }
    std::string tmpl = dir + "/." + base + ".msmon-XXXXXX";
    fd_ = ::mkstemp(tmpl.data());
    if (fd_ < 0) {
        error = "cannot create a temporary file in " + dir + ": " + std::strerror(errno);
        return false;
    }
    ::fcntl(fd_, F_SETFD, FD_CLOEXEC);
    temp_path_ = tmpl;
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

bool ReplacementFile::replace(const std::string& target, std::string& error) {
    if (unnamed_) {
        const std::string proc = "/proc/self/fd/" + std::to_string(fd_);
        for (int attempt = 0; temp_path_.empty(); ++attempt) {
            const std::string name = dir_ + "/." + base_ + ".msmon-" + random_suffix();
            if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
                temp_path_ = name;
            } else if (errno != EEXIST || attempt >= 100) {
                error = "cannot give the new " + base_ + " a name in " + dir_ + ": " + std::strerror(errno);
                return false;
            }
        }
    }
    if (::rename(temp_path_.c_str(), target.c_str()) != 0) {
        error = "cannot replace " + target + ": " + std::strerror(errno);
        return false;  // the destructor removes the temp name
    }
    temp_path_.clear();
    return true;
}

}  // namespace msmon
