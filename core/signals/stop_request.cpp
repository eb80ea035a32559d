// The process-wide stop request (see the header).
#include "core/signals/stop_request.hpp"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace msmon {

namespace {

std::atomic<std::int64_t> g_deadline_ms{0};  // CLOCK_MONOTONIC ms when waits give up; 0: no stop requested
static_assert(std::atomic<std::int64_t>::is_always_lock_free, "set from a signal handler");

std::int64_t monotonic_ms() noexcept {
    timespec t{};
    ::clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<std::int64_t>(t.tv_sec) * 1000 + t.tv_nsec / 1000000;
}

}  // namespace

void request_stop() noexcept {
    std::int64_t none = 0;
    g_deadline_ms.compare_exchange_strong(none, monotonic_ms() + kStopGrace.count());
}

bool stop_grace_over() noexcept {
    const std::int64_t d = g_deadline_ms.load();
    return d != 0 && monotonic_ms() >= d;
}

std::chrono::milliseconds stop_grace_left() noexcept {
    const std::int64_t d = g_deadline_ms.load();
    if (d == 0) return kStopGrace;
    return std::chrono::milliseconds(std::max<std::int64_t>(d - monotonic_ms(), 0));
}

void clear_stop_request() noexcept {
    g_deadline_ms.store(0);
}

}  // namespace msmon
