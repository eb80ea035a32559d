// Reading and writing the monitor config while a trainer may be rewriting it (msprobe writes `dynamic_on:
// false` back in place, not atomically): reads retry an
// empty or cut file; writes are atomic (temp file, fsync, rename in the file's folder, folder fsync), keep the
// owner and mode, and always move the mtime forward so the trainer notices.
//
// The config usually sits in a folder its trainer owns, and msmon often runs as root: the file is pinned
// (core/files/pinned_file.hpp) and read and replaced through its folder's descriptor, never through a link
// (unless the user asks with --follow-config-link, and then only the file the link named when it was read).
#pragma once

#include <sys/types.h>

#include <ctime>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/files/pinned_file.hpp"

namespace msmon {

// The config as the user named it, and whether links to it may be followed (--follow-config-link).
struct ConfigTarget {
    ConfigTarget(std::string p = {}, bool follow = false) : path(std::move(p)), follow_links(follow) {}
    std::string path;
    bool follow_links = false;
};

inline constexpr const char* kFollowConfigLinkOption = "--follow-config-link";

// Pins the config's folder and name (see PinnedFile::pin); nullopt with `error` when a link is refused.
std::optional<PinnedFile> pin_monitor_config(const ConfigTarget& target, std::string& error);

struct ConfigRead {
    enum class Status { ok, missing, being_written, invalid } status = Status::missing;
    nlohmann::ordered_json doc;
    std::string text;  // the bytes read, when ok (a save edits them in place: core/config/config_text_edit.hpp)
    std::string error;
    timespec mtime{};
};

// One read's bytes as read_monitor_config takes them: a UTF-8 BOM is skipped (msprobe's json.load would reject
// it); blank text is "the file is empty". False with `error` set when the text is not one JSON document.
bool parse_monitor_config_text(std::string_view text, nlohmann::ordered_json& doc, std::string& error);

// Reads and parses the config; an empty or unparsable read right after a change is retried (`attempts` × 50 ms)
// before it is called invalid. A link, a FIFO, a folder or a device is refused at once (status invalid).
ConfigRead read_monitor_config(const PinnedFile& file, int attempts = 20);
ConfigRead read_monitor_config(const ConfigTarget& target, int attempts = 20);

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

// The stamp of the pinned name (never following a link); size -1 when it cannot be stat'ed.
FileStamp stamp_of(const PinnedFile& file);
FileStamp stamp_of_fd(int fd);

// msprobe compares st_mtime as a Python float: two stamps the trainer can tell apart differ as doubles.
double mtime_as_python_float(const timespec& t);

// Atomically replaces the pinned config (a name in its folder: a link renamed over that name meanwhile is
// replaced, not written through). The new file's mtime is set before the rename to a value msprobe sees as later
// than the old one, so no reader ever sees the new content with the old mtime. Returns false with `error` set;
// the original file is then untouched. `written` gets the new stamp. `before_rename` (tests only) runs at the last
// moment before the rename.
bool write_monitor_config(const PinnedFile& file, const nlohmann::ordered_json& doc, std::string& error,
                          FileStamp* written = nullptr, const std::function<void()>& before_rename = {});
// The same with the text to write given (a JSON object, as edit_config_text makes it).
bool write_monitor_config_text(const PinnedFile& file, const std::string& text, std::string& error,
                               FileStamp* written = nullptr, const std::function<void()>& before_rename = {});
bool write_monitor_config(const ConfigTarget& target, const nlohmann::ordered_json& doc, std::string& error,
                          FileStamp* written = nullptr);

}  // namespace msmon
