// The failures of one output msmon writes (the gauges' textfile, rows shipped, a command run): said once when
// writes start failing, with why, and once when they work again, never once per try (a write every second would
// bury everything else); counted for --json and the summary. Not thread-safe: the caller holds its own lock.
#pragma once

#include <cstdint>
#include <string>

namespace msmon {

class WriteFailures {
public:
    // `output`: how the message names the output ("--prom-textfile"); `lost`: what a failure means for the user
    // ("the gauges are not written").
    WriteFailures(std::string output, std::string lost) : output_(std::move(output)), lost_(std::move(lost)) {}

    // One write's outcome: `error` empty when it worked. Returns what to say now ("--prom-textfile: Permission
    // denied (the gauges are not written)", "--prom-textfile: written again"), or "" when nothing changed.
    std::string outcome(const std::string& error);

    std::uint64_t failures() const { return failures_; }
    const std::string& last_error() const { return error_; }  // "" once a write worked again

private:
    std::string output_, lost_;
    std::uint64_t failures_ = 0;
    std::string error_;
};

}  // namespace msmon
