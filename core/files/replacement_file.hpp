// A file written beside its target and renamed over it, so that readers see the old content or the new, never a
// half-written one. While it is written it has no name (O_TMPFILE): a process killed meanwhile (SIGKILL, the
// OOM killer, a node going down) leaves nothing in a folder msmon does not own. Where the filesystem or a missing
// /proc cannot do that, it is a new "." + base + ".msmon-XXXXXX" made by mkstemp (O_EXCL: a name or link planted
// there by another user is never opened), removed again on every path but a kill. Everything happens through one
// descriptor of the folder, and the rename replaces the name itself: a link planted under the target's name is
// replaced, never written through.
#pragma once

#include <string>

namespace msmon {

class ReplacementFile {
public:
    ReplacementFile() = default;
    ReplacementFile(const ReplacementFile&) = delete;
    ReplacementFile& operator=(const ReplacementFile&) = delete;
    ~ReplacementFile();  // closes it; a named temp file not yet renamed is removed

    // Opens the new file in `dir` (mode 0600 less nothing: fchmod it as wanted). False with `error` if not.
    bool open(const std::string& dir, const std::string& base, std::string& error);
    // The same in the folder `dir_fd` (any descriptor of it, O_PATH too; it is duplicated), `dir` naming it in
    // messages.
    bool open(int dir_fd, const std::string& dir, const std::string& base, std::string& error);
    int fd() const { return fd_; }
    bool unnamed() const { return unnamed_; }

    // Writes all of `text` (EINTR and short writes handled). False with `error` on failure.
    bool write_all(const std::string& text, std::string& error);

    // Makes it `base` (given to open) in the folder, atomically. An unnamed file is first linked under a fresh
    // temporary name (linkat cannot replace a name); a kill between those two calls is the only moment a temp name
    // exists. The file stays open (fd() usable) until destruction.
    bool replace(std::string& error);

private:
    int fd_ = -1;
    int dir_fd_ = -1;
    bool unnamed_ = false;
    std::string dir_, base_;
    std::string temp_name_;  // a named temp file in the folder, not yet renamed
};

}  // namespace msmon
