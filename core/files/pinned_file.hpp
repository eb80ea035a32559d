// A file named by a descriptor of its folder and its name in that folder, found without following anyone else's
// links. Everything done to it afterwards (read, stat, replace) goes through that descriptor: someone who owns the
// folder can rename a link over the name between two steps, but cannot make a later step land anywhere else.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>

#include "core/files/input_file.hpp"

namespace msmon {

// Which symbolic links pinning follows. A link someone else owns can be repointed by them at any moment.
enum class LinkPolicy {
    trusted_folders,  // in the folders, links the effective user or root owns; the file itself never a link
    trusted,          // anywhere, links the effective user or root owns
    any,              // every link, once, now: the file is the one the links named at this moment
};

class PinnedFile {
public:
    // Opens the folder of `path` one component at a time (O_PATH | O_NOFOLLOW), following links as `links` says.
    // The last component may be missing (a file to create). Returns nullopt with `error` saying which link, whose,
    // and the way around it (`follow_option`: the option that allows every link, named in that message).
    static std::optional<PinnedFile> pin(const std::string& path, LinkPolicy links, const std::string& follow_option,
                                         std::string& error);

    PinnedFile(PinnedFile&& o) noexcept;
    PinnedFile& operator=(PinnedFile&& o) noexcept;
    PinnedFile(const PinnedFile&) = delete;
    PinnedFile& operator=(const PinnedFile&) = delete;
    ~PinnedFile();

    int folder() const { return folder_; }  // an O_PATH descriptor of the folder
    const std::string& name() const { return name_; }
    const std::string& shown() const { return shown_; }     // the path as given
    const std::string& real_path() const { return real_; }  // folder and name as resolved, for messages
    const std::string& folder_path() const { return real_folder_; }

    // The name's stat now, never following a link (ENOENT and the like: false).
    bool stat_now(struct stat& st) const;
    // Opens the name as an input (core/files/input_file.hpp): never through a link, never blocking on a FIFO, a
    // regular file only. When not ok(), `error` says why, after the path as given.
    InputFile open_for_reading(std::string& error) const;
    // An O_RDONLY descriptor of the folder, for fsync (an O_PATH one cannot be synced); -1 on failure.
    int open_folder_for_sync() const;

private:
    PinnedFile() = default;
    int folder_ = -1;
    std::string name_, shown_, real_, real_folder_;
};

}  // namespace msmon
