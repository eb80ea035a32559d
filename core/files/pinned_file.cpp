// Component-by-component resolution with O_PATH | O_NOFOLLOW, links checked for their owner before they are read.
#include "core/files/pinned_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <vector>

#include "core/files/folder_trust.hpp"

namespace msmon {

namespace {

constexpr int kMaxLinks = 40;  // as the kernel's ELOOP limit

std::deque<std::string> components(const std::string& path) {
    std::deque<std::string> out;
    std::size_t at = 0;
    while (at <= path.size()) {
        const auto slash = path.find('/', at);
        const std::string c = path.substr(at, slash == std::string::npos ? std::string::npos : slash - at);
        if (!c.empty() && c != ".") out.push_back(c);
        if (slash == std::string::npos) break;
        at = slash + 1;
    }
    return out;
}

std::string joined(const std::string& folder, const std::string& name) {
    return folder == "/" ? "/" + name : folder + "/" + name;
}

std::string parent_of(const std::string& folder) {
    const auto slash = folder.find_last_of('/');
    return slash == 0 || slash == std::string::npos ? "/" : folder.substr(0, slash);
}

// readlink of an O_PATH descriptor of a link, or of `name` in `dir`.
bool read_link(int dir, const char* name, std::string& target) {
    std::vector<char> buf(PATH_MAX);
    const ssize_t n = ::readlinkat(dir, name, buf.data(), buf.size());
    if (n < 0 || static_cast<std::size_t>(n) >= buf.size()) return false;
    target.assign(buf.data(), static_cast<std::size_t>(n));
    return true;
}

// Where a path resolves to, for the message that suggests it (best effort; never used to open anything).
std::string resolved_text(const std::string& path) {
    char buf[PATH_MAX];
    return ::realpath(path.c_str(), buf) ? std::string(buf) : std::string();
}

class FolderWalk {
public:
    FolderWalk(const std::string& path, LinkPolicy links, const std::string& follow_option)
        : shown_(path), links_policy_(links), follow_option_(follow_option) {}
    ~FolderWalk() { close_current(); }
    FolderWalk(const FolderWalk&) = delete;
    FolderWalk& operator=(const FolderWalk&) = delete;

    bool start(bool absolute, std::string& error) {
        if (absolute) return restart_at_root(error);
        fd_ = ::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        char cwd[PATH_MAX];
        real_ = ::getcwd(cwd, sizeof cwd) ? cwd : ".";
        if (fd_ < 0) error = std::string("cannot open the current folder: ") + std::strerror(errno);
        return fd_ >= 0;
    }

    // Walks `todo` (folder components); links met on the way put their target's components in front.
    bool walk(std::deque<std::string> todo, std::string& error) {
        while (!todo.empty()) {
            const std::string c = todo.front();
            todo.pop_front();
            if (c == "..") {
                const int up = ::openat(fd_, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (up < 0) return fail(error, "cannot open the folder above " + real_);
                replace_current(up, parent_of(real_));
                continue;
            }
            const int next = ::openat(fd_, c.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
            if (next < 0) return fail(error, "cannot open the folder " + joined(real_, c));
            struct stat st {};
            if (::fstat(next, &st) != 0) {
                ::close(next);
                return fail(error, "cannot look at " + joined(real_, c));
            }
            if (S_ISLNK(st.st_mode)) {
                std::string target;
                const bool read = read_link(next, "", target);
                ::close(next);
                if (!read) return fail(error, "cannot read the link " + joined(real_, c));
                if (links_policy_ != LinkPolicy::any && !trusted_owner(st.st_uid)) {
                    error = joined(real_, c) + " is a symbolic link owned by " + user_text(st.st_uid) +
                            ", not by you or root: msmon does not follow another user's link to a file it reads or "
                            "writes (they could point it anywhere at any moment)" +
                            way_around();
                    return false;
                }
                if (!follow_link(target, todo, error)) return false;
                continue;
            }
            if (!S_ISDIR(st.st_mode)) {
                ::close(next);
                error = joined(real_, c) + " is not a folder";
                return false;
            }
            replace_current(next, joined(real_, c));
        }
        return true;
    }

    // The last component: a link is refused, or as the policy allows resolved (its folder walked) until a non-link.
    bool settle_name(std::string name, std::string& error) {
        for (int hops = 0;; ++hops) {
            struct stat st {};
            if (::fstatat(fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(st.st_mode)) {
                name_ = name;
                return true;
            }
            std::string target;
            if (!read_link(fd_, name.c_str(), target))
                return fail(error, "cannot read the link " + joined(real_, name));
            if (links_policy_ == LinkPolicy::trusted && !trusted_owner(st.st_uid)) {
                error = shown_ + " is a symbolic link owned by " + user_text(st.st_uid) +
                        ", not by you or root: msmon does not follow another user's link (they could point it "
                        "anywhere at any moment)" +
                        way_around();
                return false;
            }
            if (links_policy_ == LinkPolicy::trusted_folders) {
                error = shown_ + " is a symbolic link (to " + target +
                        "): msmon does not read or write it through a link, which whoever can write " + real_ +
                        " could point at any file at any moment" + way_around();
                return false;
            }
            if (hops >= kMaxLinks) {
                error = shown_ + ": more than " + std::to_string(kMaxLinks) + " links";
                return false;
            }
            auto parts = components(target);
            if (parts.empty() || target.back() == '/') {
                error = shown_ + " is a link to a folder (" + target + "), not to a file";
                return false;
            }
            name = parts.back();
            parts.pop_back();
            if (target[0] == '/' && !restart_at_root(error)) return false;
            if (!walk(parts, error)) return false;
        }
    }

    int release() {
        const int fd = fd_;
        fd_ = -1;
        return fd;
    }
    const std::string& real() const { return real_; }
    const std::string& name() const { return name_; }

private:
    bool restart_at_root(std::string& error) {
        close_current();
        fd_ = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        real_ = "/";
        if (fd_ < 0) error = std::string("cannot open /: ") + std::strerror(errno);
        return fd_ >= 0;
    }

    bool follow_link(const std::string& target, std::deque<std::string>& todo, std::string& error) {
        if (++links_ > kMaxLinks) {
            error = shown_ + ": more than " + std::to_string(kMaxLinks) + " links";
            return false;
        }
        if (!target.empty() && target[0] == '/' && !restart_at_root(error)) return false;
        auto parts = components(target);
        todo.insert(todo.begin(), parts.begin(), parts.end());
        return true;
    }

    std::string way_around() const {
        const std::string real = resolved_text(shown_);
        return ". Give the file itself" + (real.empty() || real == shown_ ? std::string() : " (" + real + ")") +
               ", or add " + follow_option_ + " if you mean to go through that link";
    }

    bool fail(std::string& error, const std::string& what) const {
        error = what + ": " + std::strerror(errno);
        return false;
    }

    void replace_current(int fd, std::string real) {
        close_current();
        fd_ = fd;
        real_ = std::move(real);
    }
    void close_current() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

    std::string shown_;
    LinkPolicy links_policy_;
    std::string follow_option_;
    int fd_ = -1;
    int links_ = 0;
    std::string real_, name_;
};

}  // namespace

std::optional<PinnedFile> PinnedFile::pin(const std::string& path, LinkPolicy links, const std::string& follow_option,
                                          std::string& error) {
    auto parts = components(path);
    if (parts.empty() || path.back() == '/' || parts.back() == "..") {
        error = "'" + path + "' names a folder, not a file";
        return std::nullopt;
    }
    const std::string name = parts.back();
    parts.pop_back();
    FolderWalk walk(path, links, follow_option);
    if (!walk.start(path[0] == '/', error) || !walk.walk(parts, error) || !walk.settle_name(name, error))
        return std::nullopt;
    PinnedFile pinned;
    pinned.folder_ = walk.release();
    pinned.name_ = walk.name();
    pinned.shown_ = path;
    pinned.real_folder_ = walk.real();
    pinned.real_ = joined(walk.real(), walk.name());
    return pinned;
}

PinnedFile::PinnedFile(PinnedFile&& o) noexcept
    : folder_(o.folder_),
      name_(std::move(o.name_)),
      shown_(std::move(o.shown_)),
      real_(std::move(o.real_)),
      real_folder_(std::move(o.real_folder_)) {
    o.folder_ = -1;
}

PinnedFile& PinnedFile::operator=(PinnedFile&& o) noexcept {
    if (this != &o) {
        if (folder_ >= 0) ::close(folder_);
        folder_ = o.folder_;
        o.folder_ = -1;
        name_ = std::move(o.name_);
        shown_ = std::move(o.shown_);
        real_ = std::move(o.real_);
        real_folder_ = std::move(o.real_folder_);
    }
    return *this;
}

PinnedFile::~PinnedFile() {
    if (folder_ >= 0) ::close(folder_);
}

bool PinnedFile::stat_now(struct stat& st) const {
    return ::fstatat(folder_, name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

InputFile PinnedFile::open_for_reading(std::string& error) const {
    InputFile f = InputFile::open_at(folder_, name_, InputLinks::refuse);
    if (!f.ok())
        error = S_ISLNK(f.status().st_mode) ? shown_ +
                                                  " became a symbolic link since msmon looked (someone is swapping "
                                                  "it): msmon does not read or write through it"
                                            : shown_ + " " + f.error();
    return f;
}

int PinnedFile::open_folder_for_sync() const {
    return ::openat(folder_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

}  // namespace msmon
