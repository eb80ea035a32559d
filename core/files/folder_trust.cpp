// Owner and mode checks, folder by folder up the path.
#include "core/files/folder_trust.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/files/input_file.hpp"

namespace msmon {

namespace {

std::string user_name(uid_t uid) {
    passwd pw{}, *found = nullptr;
    std::vector<char> buf(4096);
    if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found && found->pw_name) return found->pw_name;
    return {};
}

// The group is the owner's private group: named as the owner, and nobody else listed in it.
bool private_group_of(gid_t gid, uid_t owner, std::string& group) {
    struct group gr {
    }, *found = nullptr;
    std::vector<char> buf(16384);
    if (::getgrgid_r(gid, &gr, buf.data(), buf.size(), &found) != 0 || !found) {
        group = "gid " + std::to_string(gid);
        return false;
    }
    group = found->gr_name ? found->gr_name : "gid " + std::to_string(gid);
    const std::string owner_name = user_name(owner);
    if (owner_name.empty() || group != owner_name) return false;
    for (char** m = found->gr_mem; m && *m; ++m)
        if (owner_name != *m) return false;
    return true;
}

std::string mode_text(mode_t mode) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
    return buf;
}

}  // namespace

std::string user_text(uid_t uid) {
    const std::string name = user_name(uid);
    return (name.empty() ? std::string() : name + " ") + "(uid " + std::to_string(uid) + ")";
}

bool trusted_owner(uid_t uid) {
    return uid == ::geteuid() || uid == 0;
}

std::string owner_or_write_problem(const struct stat& st, bool sticky_ok) {
    if (!trusted_owner(st.st_uid)) return "is owned by " + user_text(st.st_uid) + ", not by you or root";
    const bool root_sticky = st.st_uid == 0 && (st.st_mode & S_ISVTX) != 0;
    if ((st.st_mode & S_IWOTH) && !(sticky_ok && root_sticky))
        return "is writable by everyone (mode " + mode_text(st.st_mode) + ")";
    std::string group;
    if ((st.st_mode & S_IWGRP) && !(sticky_ok && root_sticky) && !private_group_of(st.st_gid, st.st_uid, group))
        return "is writable by its group " + group + " (mode " + mode_text(st.st_mode) + ")";
    return {};
}

std::string folder_trust_problem(const std::string& real_dir, const std::string& stop_after) {
    std::string dir = real_dir.empty() ? "/" : real_dir;
    for (bool innermost = true;; innermost = false) {
        struct stat st {};
        if (::lstat(dir.c_str(), &st) != 0) return dir + " cannot be looked at: " + std::strerror(errno);
        if (!S_ISDIR(st.st_mode)) return dir + " is not a folder";
        if (std::string why = owner_or_write_problem(st, !innermost); !why.empty()) return dir + " " + why;
        if (dir == "/" || dir == stop_after) return {};
        const auto slash = dir.find_last_of('/');
        dir = slash == 0 || slash == std::string::npos ? "/" : dir.substr(0, slash);
    }
}

namespace {

constexpr off_t kMaxTrustedFileBytes = 1 << 20;

std::string folder_of(const std::string& path) {
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

bool under(const std::string& path, const std::string& dir) {
    return !dir.empty() && path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

// The folders holding `path` (resolved), up to home or /.
std::string folders_problem(const std::string& path, const std::string& real_home) {
    char buf[PATH_MAX];
    if (!::realpath(folder_of(path).c_str(), buf))
        return folder_of(path) + " cannot be resolved: " + std::strerror(errno);
    const std::string dir = buf;
    return folder_trust_problem(dir, dir == real_home || under(dir, real_home) ? real_home : "/");
}

}  // namespace

TrustedRead read_trusted_file(const std::string& path, const std::string& home, std::string& text, std::string& error) {
    struct stat link {};
    if (::lstat(path.c_str(), &link) != 0) {
        if (errno == ENOENT) return TrustedRead::missing;
        error = std::string("cannot be looked at: ") + std::strerror(errno);
        return TrustedRead::refused;
    }
    char buf[PATH_MAX];
    const std::string real_home = ::realpath(home.c_str(), buf) ? std::string(buf) : home;
    const std::string fix =
        ". msmon runs commands this file names, so (as ssh with ~/.ssh) it reads it only when "
        "nobody but you or root can change it or the folders above it; the defaults apply";
    if (std::string why = folders_problem(path, real_home); !why.empty()) {
        error = "refused: " + why + fix;
        return TrustedRead::refused;
    }
    if (S_ISLNK(link.st_mode) && !trusted_owner(link.st_uid)) {
        error = path + " is refused: it is a link " + owner_or_write_problem(link) + fix;
        return TrustedRead::refused;
    }
    if (!::realpath(path.c_str(), buf)) {
        error = std::string("cannot be resolved: ") + std::strerror(errno);
        return TrustedRead::refused;
    }
    const std::string real = buf;
    if (real != path)
        if (std::string why = folders_problem(real, real_home); !why.empty()) {
            error = path + " is refused: it is a link to " + real + ", and " + why + fix;
            return TrustedRead::refused;
        }
    InputFile in = InputFile::open(real, InputLinks::refuse);  // a link swapped in since realpath: refused
    if (!in.ok() && !in.not_regular()) {
        error = "cannot be read: " + in.error();
        return TrustedRead::refused;
    }
    const std::string why = !in.ok() ? in.error()
                            : in.status().st_size > kMaxTrustedFileBytes
                                ? "is larger than " + byte_size_text(kMaxTrustedFileBytes)
                                : owner_or_write_problem(in.status());
    if (!why.empty()) {
        error = "refused: " + (real != path ? "its target " + real + " " : std::string("it ")) + why + fix;
        return TrustedRead::refused;
    }
    if (!in.read_all(text, kMaxTrustedFileBytes, "")) {
        error = "cannot be read: it " + in.error();
        return TrustedRead::refused;
    }
    return TrustedRead::ok;
}

}  // namespace msmon
