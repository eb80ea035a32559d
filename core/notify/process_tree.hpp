// What a command started, followed while it runs: every process descended from it, seen through /proc (parent pids
// and start times). A process group is not enough: a child that calls setsid() leaves the group, and once its
// parent exits it is init's. Each process is remembered with its start time, so that a pid used again by someone
// else is never signalled.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>

namespace msmon {

class ProcessTree {
public:
    explicit ProcessTree(pid_t root) : root_(root) {}
    // Looks for new descendants: of the root, and of every process seen before that still runs (an orphan's own
    // children). Call it often while the command runs (a poll of /proc: about 1 ms for 500 processes).
    void refresh();
    // Sends `sig` to every process seen that still runs (the same process: its start time unchanged), and to the
    // root's process group. Returns how many were signalled.
    int signal_all(int sig);
    std::size_t seen() const { return seen_.size(); }

private:
    pid_t root_;
    std::map<pid_t, std::uint64_t> seen_;  // pid → its start time (clock ticks after boot)
};

// A process's parent and start time from /proc/PID/stat; false once it is gone.
bool process_parent_and_start(pid_t pid, pid_t& parent, std::uint64_t& start);

}  // namespace msmon
