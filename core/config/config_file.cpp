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
    try {
        doc = nlohmann::ordered_json::parse(text.begin(), text.end());
        return true;
    } catch (const nlohmann::ordered_json::exception& e) {
        error = e.what();
        return false;
    }
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

std::string render_monitor_config(const nlohmann::ordered_json& doc) { return doc.dump(2) + "\n"; }

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
    std::string tmpl = dir + "/." + base + ".msmon-XXXXXX";
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0) {
        error = "cannot create a temporary file in " + dir + ": " + std::strerror(errno);
        return false;
    }
    const std::string text = render_monitor_config(doc);
    bool ok = true;
    for (std::size_t off = 0; ok && off < text.size();) {
        const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
        if (n < 0 && errno == EINTR) continue;
        ok = n > 0;
        off += static_cast<std::size_t>(std::max<ssize_t>(n, 0));
    }
    if (ok && existed) ok = ::fchmod(fd, before.st_mode & 07777) == 0;
    if (ok) ok = ::fsync(fd) == 0;
    if (!ok) error = std::string("cannot write the new config: ") + std::strerror(errno);
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
    const FileStamp stamp = ok ? stamp_of_fd(fd) : FileStamp{};
    ::close(fd);
    if (ok && ::rename(tmpl.c_str(), target.c_str()) != 0) {
        error = "cannot replace " + target + ": " + std::strerror(errno);
        ok = false;
    }
    if (!ok) {
        ::unlink(tmpl.c_str());
        return false;
    }
    if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
    if (written) *written = stamp;
    return true;
}

}  // namespace msmon
