// eventfd wrapper: signal() is a single write(2), safe from signal handlers.
#include "core/watch/wake_pipe.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace msmon {

WakeFd::WakeFd() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

WakeFd::~WakeFd() {
    if (fd_ >= 0) ::close(fd_);
}

void WakeFd::signal() const {
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(fd_, &one, sizeof one);
}

void WakeFd::drain() const {
    std::uint64_t v = 0;
    [[maybe_unused]] auto n = ::read(fd_, &v, sizeof v);
}

}  // namespace msmon
