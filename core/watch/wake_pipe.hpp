// An eventfd that interrupts a poll() from another thread.
#pragma once

namespace msmon {

class WakeFd {
public:
    WakeFd();
    ~WakeFd();
    WakeFd(const WakeFd&) = delete;
    WakeFd& operator=(const WakeFd&) = delete;
    int fd() const { return fd_; }
    void signal() const;  // async-signal-safe
    void drain() const;

private:
    int fd_ = -1;
};

}  // namespace msmon
