// Config file I/O. The only file msmon ever writes outside its own store, and only on the user's action.
#include "core/config/config_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/config/ordered_json_parse.hpp"
#include "core/files/input_limits.hpp"
#include "core/files/replacement_file.hpp"
#include "core/text/json_depth.hpp"

namespace msmon {

std::optional<PinnedFile> pin_monitor_config(const ConfigTarget& target, std::string& error) {
    return PinnedFile::pin(target.path, target.follow_links ? LinkPolicy::any : LinkPolicy::trusted_folders,
                           kFollowConfigLinkOption, error);
}

double mtime_as_python_float(const timespec& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

FileStamp stamp_of(const PinnedFile& file) {
    FileStamp s;
    struct stat st {};
    if (!file.stat_now(st)) return s;
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

ConfigRead read_monitor_config(const PinnedFile& file, int attempts) {
    ConfigRead r;
    for (int i = 0; i < std::max(1, attempts); ++i) {
        struct stat st {};
        if (!file.stat_now(st)) {
            r.status = ConfigRead::Status::missing;
            r.error = std::strerror(errno);
            return r;
        }
        r.mtime = st.st_mtim;
        InputFile in = file.open_for_reading(r.error);
        std::string text;
        if (!in.ok()) {
            // A link, a FIFO, a folder, a device: no retry makes it right.
            r.status = in.missing() ? ConfigRead::Status::missing : ConfigRead::Status::invalid;
            return r;
        }
        if (!in.read_all(text, input_limits().json_document, kJsonDocumentLimit)) {
            r.error = file.shown() + " " + in.error();
            r.status = ConfigRead::Status::invalid;
            return r;
        }
        if (parse_monitor_config_text(text, r.doc, r.error)) {
            r.status = ConfigRead::Status::ok;
            r.text = std::move(text);
            r.error.clear();
            return r;
        }
        r.status = ConfigRead::Status::being_written;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    r.status = ConfigRead::Status::invalid;
    return r;
}

ConfigRead read_monitor_config(const ConfigTarget& target, int attempts) {
    ConfigRead r;
    auto file = pin_monitor_config(target, r.error);
    if (!file) {
        r.status = ConfigRead::Status::invalid;
        return r;
    }
    return read_monitor_config(*file, attempts);
}

std::string render_monitor_config(const nlohmann::ordered_json& doc) {
    return doc.dump(2) + "\n";
}

bool write_monitor_config(const PinnedFile& file, const nlohmann::ordered_json& doc, std::string& error,
                          FileStamp* written, const std::function<void()>& before_rename) {
    if (!doc.is_object()) {
        error = "the config must be a JSON object";
        return false;
    }
    return write_monitor_config_text(file, render_monitor_config(doc), error, written, before_rename);
}

bool write_monitor_config_text(const PinnedFile& file, const std::string& text, std::string& error, FileStamp* written,
                               const std::function<void()>& before_rename) {
    // The owner and mode to keep: the file under the pinned name now, which must still be a plain file.
    struct stat before {};
    const bool existed = file.stat_now(before);
    if (existed && !S_ISREG(before.st_mode)) {
        error = file.shown() + (S_ISLNK(before.st_mode) ? " became a symbolic link since msmon read it (someone is "
                                                          "swapping it): nothing was written"
                                                        : " is no longer a regular file: nothing was written");
        return false;
    }
    ReplacementFile replacement;
    if (!replacement.open(file.folder(), file.folder_path(), file.name(), error)) return false;
    const int fd = replacement.fd();
    bool ok = replacement.write_all(text, error);
    // The new file keeps the old one's owner, group and mode: the trainer (often another user) writes it back when a
    // collection ends, and a failed write-back leaves dynamic_on true (a collection that never ends). If the owner
    // cannot be kept (msmon is neither root nor the owner), nothing is replaced.
    if (ok && existed && (before.st_uid != ::geteuid() || before.st_gid != ::getegid()) &&
        ::fchown(fd, before.st_uid, before.st_gid) != 0) {
        error = "cannot keep " + file.real_path() + "'s owner " + std::to_string(before.st_uid) + ":" +
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
    if (ok && before_rename) before_rename();
    if (!ok || !replacement.replace(error)) return false;
    if (const int dfd = file.open_folder_for_sync(); dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
    if (written) *written = stamp;
    return true;
}

bool write_monitor_config(const ConfigTarget& target, const nlohmann::ordered_json& doc, std::string& error,
                          FileStamp* written) {
    auto file = pin_monitor_config(target, error);
    return file && write_monitor_config(*file, doc, error, written);
}

}  // namespace msmon
