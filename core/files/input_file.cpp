// Opening and reading an input (see the header).
#include "core/files/input_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace msmon {

const char* file_type_name(mode_t mode) {
    return S_ISFIFO(mode)                   ? "a FIFO"
           : S_ISDIR(mode)                  ? "a folder"
           : S_ISCHR(mode) || S_ISBLK(mode) ? "a device"
           : S_ISSOCK(mode)                 ? "a socket"
           : S_ISLNK(mode)                  ? "a symbolic link"
                                            : "not a file";
}

std::string byte_size_text(std::int64_t bytes) {
    const auto exact = [](std::int64_t n, int shift) { return n % (std::int64_t{1} << shift) == 0; };
    if (bytes >= (std::int64_t{1} << 30) && exact(bytes, 30)) return std::to_string(bytes >> 30) + " GiB";
    if (bytes >= (std::int64_t{1} << 20) && exact(bytes, 20)) return std::to_string(bytes >> 20) + " MiB";
    if (bytes >= (std::int64_t{1} << 10) && exact(bytes, 10)) return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " bytes";
}

InputFile InputFile::open(const std::string& path, InputLinks links) {
    return open_at(AT_FDCWD, path, links);
}

InputFile InputFile::open_at(int dir_fd, const std::string& name, InputLinks links) {
    InputFile f;
    const bool nofollow = links == InputLinks::refuse;
    const int fd =
        ::openat(dir_fd, name.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
    if (fd < 0) {
        const bool link = nofollow && errno == ELOOP;
        f.problem_ = errno == ENOENT || errno == ENOTDIR ? Problem::missing
                     : link                              ? Problem::not_regular
                                                         : Problem::failed;
        f.error_ = link ? "is a symbolic link: msmon does not read through it here" : std::string(std::strerror(errno));
        if (link) f.st_.st_mode = S_IFLNK;  // O_NOFOLLOW's ELOOP: the name is a link
        return f;
    }
    f.check(fd);
    return f;
}

void InputFile::check(int fd) {
    if (::fstat(fd, &st_) != 0) {
        problem_ = Problem::failed;
        error_ = std::strerror(errno);
        ::close(fd);
        return;
    }
    if (!S_ISREG(st_.st_mode)) {
        problem_ = Problem::not_regular;
        error_ = std::string("is ") + file_type_name(st_.st_mode) + ", not a regular file";
        ::close(fd);
        return;
    }
    // A regular file: reads never block, and a read that returns less than asked is the end.
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    fd_ = fd;
}

InputFile::InputFile(InputFile&& o) noexcept
    : fd_(o.fd_), problem_(o.problem_), st_(o.st_), error_(std::move(o.error_)) {
    o.fd_ = -1;
}

InputFile& InputFile::operator=(InputFile&& o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = o.fd_;
        problem_ = o.problem_;
        st_ = o.st_;
        error_ = std::move(o.error_);
        o.fd_ = -1;
    }
    return *this;
}

InputFile::~InputFile() {
    if (fd_ >= 0) ::close(fd_);
}

bool InputFile::read_all(std::string& text, std::int64_t cap, const std::string& cap_setting) {
    text.clear();
    if (!ok()) return false;
    const auto too_large = [&] {
        problem_ = Problem::too_large;
        error_ = "is larger than " + byte_size_text(cap) +
                 (cap_setting.empty() ? "" : " (the limit " + cap_setting + " in msmon's settings)");
        return false;
    };
    if (st_.st_size > cap) return too_large();
    text.reserve(static_cast<std::size_t>(st_.st_size));
    char buf[65536];
    while (true) {
        const ssize_t n = ::read(fd_, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            problem_ = Problem::failed;
            error_ = std::string("cannot be read: ") + std::strerror(errno);
            return false;
        }
        if (n == 0) return true;
        if (static_cast<std::int64_t>(text.size()) + n > cap) {
            text.clear();
            return too_large();  // it grew while read
        }
        text.append(buf, static_cast<std::size_t>(n));
    }
}

bool read_input_file(const std::string& path, InputLinks links, std::int64_t cap, const std::string& cap_setting,
                     std::string& text, std::string& error, bool* missing) {
    InputFile f = InputFile::open(path, links);
    if (missing) *missing = f.missing();
    if (f.ok() && f.read_all(text, cap, cap_setting)) return true;
    error = path + " " + f.error();
    return false;
}

}  // namespace msmon
