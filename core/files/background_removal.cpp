// The removal runs in a grandchild of a fork(): the caller may have threads (a logger, a reader), so the child uses
// only system calls — no allocation, no locks — walking the tree with openat/getdents64/unlinkat on stack buffers.
#include "core/files/background_removal.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace msmon {

namespace {

// struct linux_dirent64: d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1), then the name, NUL-terminated.
constexpr std::size_t kReclenOffset = 16, kNameOffset = 19;

bool is_dot(const char* name) {
    return name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0));
}

// Removes what `dirfd` holds; `depth` bounds the recursion (each level keeps a buffer on the stack).
void remove_contents(int dirfd, int depth) {
    if (depth > 64) return;
    alignas(8) char buf[8192];
    // Entries are removed as they are listed; reading again from the start until nothing is left copes with a
    // directory that changes while it is read.
    for (bool removed_any = true; removed_any;) {
        removed_any = false;
        ::lseek(dirfd, 0, SEEK_SET);
        for (;;) {
            const long n = ::syscall(SYS_getdents64, dirfd, buf, sizeof buf);
            if (n <= 0) break;
            for (long off = 0; off < n;) {
                unsigned short reclen = 0;
                std::memcpy(&reclen, buf + off + kReclenOffset, sizeof reclen);
                const char* name = buf + off + kNameOffset;
                off += reclen;
                if (is_dot(name)) continue;
                if (::unlinkat(dirfd, name, 0) == 0) {
                    removed_any = true;
                    continue;
                }
                if (errno != EISDIR) continue;
                const int sub = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub < 0) continue;
                remove_contents(sub, depth + 1);
                ::close(sub);
                if (::unlinkat(dirfd, name, AT_REMOVEDIR) == 0) removed_any = true;
            }
        }
    }
}

}  // namespace

bool remove_tree_in_background(const std::string& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return false;
    const pid_t child = ::fork();
    if (child < 0) {
        ::close(fd);
        return false;
    }
    if (child == 0) {
        // The child leaves the session and forks the worker, which init adopts: the caller reaps the child at once
        // and can exit; the shell does not wait for the worker.
        ::setsid();
        const pid_t worker = ::fork();
        if (worker != 0) ::_exit(0);
        ::setpriority(PRIO_PROCESS, 0, 10);
        for (int f = 0; f < 3; ++f) ::close(f);  // the terminal is not the worker's
        remove_contents(fd, 0);
        ::close(fd);
        ::rmdir(dir.c_str());  // c_str() of a string built before the fork: no allocation here
        ::_exit(0);
    }
    ::close(fd);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return true;
}

}  // namespace msmon
