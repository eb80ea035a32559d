// Descendants through /proc (see the header).
#include "core/notify/process_tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace msmon {

bool process_parent_and_start(pid_t pid, pid_t& parent, std::uint64_t& start) {
    const std::string path = "/proc/" + std::to_string(pid) + "/stat";
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[1024];
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) return false;
    buf[n] = '\0';
    // "pid (comm) state ppid ... starttime(22nd)": comm may hold spaces and parentheses, so read after the last ')'.
    const std::string text(buf, static_cast<std::size_t>(n));
    const auto close = text.rfind(')');
    if (close == std::string::npos) return false;
    std::vector<std::string> fields;
    std::size_t at = close + 2;
    while (at < text.size() && fields.size() < 20) {
        const auto end = text.find(' ', at);
        fields.push_back(text.substr(at, end == std::string::npos ? std::string::npos : end - at));
        if (end == std::string::npos) break;
        at = end + 1;
    }
    if (fields.size() < 20 || fields[0] == "Z") return false;  // state, ppid (1), ..., starttime (19); a zombie is gone
    parent = static_cast<pid_t>(std::strtol(fields[1].c_str(), nullptr, 10));
    start = std::strtoull(fields[19].c_str(), nullptr, 10);
    return true;
}

void ProcessTree::refresh() {
    if (seen_.empty()) {
        pid_t parent = 0;
        std::uint64_t start = 0;
        if (!process_parent_and_start(root_, parent, start)) return;
        seen_[root_] = start;
    }
    DIR* proc = ::opendir("/proc");
    if (!proc) return;
    std::map<pid_t, std::pair<pid_t, std::uint64_t>> all;  // pid → (parent, start)
    while (const dirent* e = ::readdir(proc)) {
        char* end = nullptr;
        const long pid = std::strtol(e->d_name, &end, 10);
        if (pid <= 0 || *end) continue;
        pid_t parent = 0;
        std::uint64_t start = 0;
        if (process_parent_and_start(static_cast<pid_t>(pid), parent, start))
            all[static_cast<pid_t>(pid)] = {parent, start};
    }
    ::closedir(proc);
    // Until nothing new: a child of anything seen (and still the same process) is seen.
    for (bool grew = true; grew;) {
        grew = false;
        for (const auto& [pid, info] : all) {
            if (seen_.count(pid)) continue;
            const auto parent = seen_.find(info.first);
            if (parent == seen_.end()) continue;
            const auto now = all.find(parent->first);
            if (now == all.end() || now->second.second != parent->second) continue;  // the parent's pid reused
            seen_[pid] = info.second;
            grew = true;
        }
    }
}

int ProcessTree::signal_all(int sig) {
    int signalled = ::kill(-root_, sig) == 0 ? 1 : 0;
    for (const auto& [pid, start] : seen_) {
        pid_t parent = 0;
        std::uint64_t now = 0;
        if (process_parent_and_start(pid, parent, now) && now == start && ::kill(pid, sig) == 0) ++signalled;
    }
    return signalled;
}

}  // namespace msmon
