// Reading and writing the monitor config while a trainer may be rewriting it (spec §5.4-§5.5): reads retry an
// empty or cut file; writes are atomic (temp file, fsync, rename onto the real path, folder fsync), keep the
// mode, and always move the mtime forward so the trainer notices.
#pragma once

#include <sys/types.h>

#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace msmon {

struct ConfigRead {
    enum class Status { ok, missing, being_written, invalid } status = Status::missing;
    nlohmann::ordered_json doc;
    std::string error;
    timespec mtime{};
};

// One read's bytes as read_monitor_config takes them: a UTF-8 BOM is skipped (msprobe's json.load would reject
// it); blank text is "the file is empty". False with `error` set when the text is not one JSON document.
bool parse_monitor_config_text(std::string_view text, nlohmann::ordered_json& doc, std::string& error);

// Reads and parses the config; an empty or unparsable read right after a change is retried (`attempts` × 50 ms)
// before it is called invalid.
ConfigRead read_monitor_config(const std::string& path, int attempts = 20);

// The text msmon writes: a JSON object, indent 2 (as the trainer writes it), key order kept, floats as float
// literals (1e-08), real booleans, UTF-8 without BOM, a final newline.
std::string render_monitor_config(const nlohmann::ordered_json& doc);

// What identifies one version of the file: a rewrite in place changes mtime/size, a rename changes the inode.
struct FileStamp {
    dev_t dev = 0;
    ino_t ino = 0;
    timespec mtime{};
    off_t size = -1;
    bool operator==(const FileStamp& o) const {
        return dev == o.dev && ino == o.ino && mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec &&
               size == o.size;
    }
};

// The stamp of `path` (following symlinks); size -1 when it cannot be stat'ed.
FileStamp stamp_of(const std::string& path);
FileStamp stamp_of_fd(int fd);

// msprobe compares st_mtime as a Python float: two stamps the trainer can tell apart differ as doubles.
double mtime_as_python_float(const timespec& t);

// Atomically replaces the config (through a symlink, onto its target). The new file's mtime is set before the
// rename to a value msprobe sees as later than the old one, so no reader ever sees the new content with the old
// mtime. Returns false with `error` set; the original file is then untouched. `written` gets the new stamp.
bool write_monitor_config(const std::string& path, const nlohmann::ordered_json& doc, std::string& error,
                          FileStamp* written = nullptr);

}  // namespace msmon
