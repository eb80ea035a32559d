// Config file I/O. The only file msmon ever writes outside its own store, and only on the user's action.
#include "core/config/config_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/config/ordered_json_parse.hpp"
#include "core/files/replacement_file.hpp"
#include "core/text/json_depth.hpp"

namespace msmon {

namespace {

std::string slurp(const std::string& path, bool& ok) {
    std::ifstream in(path, std::ios::binary);
    ok = static_cast<bool>(in);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

double mtime_as_python_float(const timespec& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

FileStamp stamp_of(const std::string& path) {
    FileStamp s;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return s;
    return FileStamp{st.st_dev, st.st_ino, st.st_mtim, st.st_size};
}

FileStamp stamp_of_fd(int fd) {
    FileStamp s;
    struct stat st {};
    if (::fstat(fd, &st) != 0) return s;
    return FileStamp{st.st_dev, st.st_ino, st.st_mtim, st.st_size};
}

bool parse_monitor_config_text(std::string_view text, nlohmann::ordered_json& doc, std::string& error) {
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
        error = "the file is empty";
        return false;
    }
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // msprobe's json.load would reject it
    if (!json_depth_within(text)) {
        error = "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels: not a monitor config";
        return false;
    }
    return parse_ordered_json(text, doc, error);
}

ConfigRead read_monitor_config(const std::string& path, int attempts) {
    ConfigRead r;
    for (int i = 0; i < std::max(1, attempts); ++i) {
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0) {
            r.status = ConfigRead::Status::missing;
            r.error = std::strerror(errno);
            return r;
        }
        r.mtime = st.st_mtim;
        bool ok = false;
        const std::string text = slurp(path, ok);
        if (parse_monitor_config_text(text, r.doc, r.error)) {
            r.status = ConfigRead::Status::ok;
            r.error.clear();
            return r;
        }
        r.status = ConfigRead::Status::being_written;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    r.status = ConfigRead::Status::invalid;
    return r;
}

std::string render_monitor_config(const nlohmann::ordered_json& doc) {
    return doc.dump(2) + "\n";
}

bool write_monitor_config(const std::string& path, const nlohmann::ordered_json& doc, std::string& error,
                          FileStamp* written) {
    if (!doc.is_object()) {
        error = "the config must be a JSON object";
        return false;
    }
    // The trainer reads and writes through realpath: replace the target, not the link.
    char resolved[PATH_MAX];
    const std::string target = ::realpath(path.c_str(), resolved) ? std::string(resolved) : path;
    const auto slash = target.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : target.substr(0, slash));
    const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
    struct stat before {};
    const bool existed = ::stat(target.c_str(), &before) == 0;
    ReplacementFile file;
    if (!file.open(dir, base, error)) return false;
    const int fd = file.fd();
    bool ok = file.write_all(render_monitor_config(doc), error);
    // The new file keeps the old one's owner, group and mode: the trainer (often another user) writes it back when a
    // collection ends, and a failed write-back leaves dynamic_on true (a collection that never ends). If the owner
    // cannot be kept (msmon is neither root nor the owner), nothing is replaced.
    if (ok && existed && (before.st_uid != ::geteuid() || before.st_gid != ::getegid()) &&
        ::fchown(fd, before.st_uid, before.st_gid) != 0) {
        error = "cannot keep " + target + "'s owner " + std::to_string(before.st_uid) + ":" +
                std::to_string(before.st_gid) + " (msmon runs as " + std::to_string(::geteuid()) + ":" +
                std::to_string(::getegid()) + ": " + std::strerror(errno) +
                "); the trainer could not write it back. Edit it as its owner or as root; nothing was changed";
        ok = false;
    }
    if (ok && existed && ::fchmod(fd, before.st_mode & 07777) != 0) {
        error = std::string("cannot keep the config's mode: ") + std::strerror(errno);
        ok = false;
    }
    if (ok && ::fsync(fd) != 0) {
        error = std::string("cannot write the new config: ") + std::strerror(errno);
        ok = false;
    }
    // msprobe compares mtimes exactly (as floats): the new one must be later than the old, or the trainer never
    // reads the new content. Set it before the rename so that no reader sees the new file with an old mtime.
    if (ok && existed) {
        const FileStamp fresh = stamp_of_fd(fd);
        if (mtime_as_python_float(fresh.mtime) <= mtime_as_python_float(before.st_mtim)) {
            timespec t[2];
            t[0].tv_nsec = UTIME_OMIT;
            t[0].tv_sec = 0;
            t[1] = before.st_mtim;
            t[1].tv_nsec += 1000000;  // +1 ms: well above a double's resolution at today's epoch seconds
            if (t[1].tv_nsec >= 1000000000) {
                t[1].tv_nsec -= 1000000000;
                ++t[1].tv_sec;
            }
            ok = ::futimens(fd, t) == 0;
            if (!ok) error = std::string("cannot set the new config's mtime: ") + std::strerror(errno);
        }
    }
    const FileStamp stamp = ok ? stamp_of_fd(fd) : FileStamp{};  // linking and renaming leave these as they are
    if (!ok || !file.replace(target, error)) return false;
    if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
    if (written) *written = stamp;
    return true;
}

}  // namespace msmon
