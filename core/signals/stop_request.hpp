// The process was told to stop (SIGINT, SIGTERM, SIGHUP, q). A signal ends msmon within 2 s in every state, and
// the one wait that could outlast that is a request to ClickHouse (its timeout is 30 s): a stop gives what is in
// flight, or started while stopping (the last rows shipped, the last gauges), kStopGrace to end, then every wait
// of the HTTP client gives up with "msmon is stopping". Safe to call from a signal handler.
#pragma once

#include <chrono>

namespace msmon {

inline constexpr std::chrono::milliseconds kStopGrace{800};

// Async-signal-safe (a lock-free atomic and clock_gettime). The first call sets the deadline; later ones keep it.
void request_stop() noexcept;
// A stop was requested and its grace has passed: a wait should give up now.
bool stop_grace_over() noexcept;
// What is left of the stop's grace (all of kStopGrace when no stop was requested: a stop about to be). What an
// --on-incident command still running is given, so that it and a request to ClickHouse share one grace.
std::chrono::milliseconds stop_grace_left() noexcept;
// For tests in one process: no stop requested.
void clear_stop_request() noexcept;

}  // namespace msmon
