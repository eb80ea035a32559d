// Said once per change (see the header).
#include "core/export/write_failures.hpp"

namespace msmon {

std::string WriteFailures::outcome(const std::string& error) {
    std::string say;
    if (!error.empty()) {
        ++failures_;
        if (error_.empty()) say = output_ + ": " + error + " (" + lost_ + ")";
    } else if (!error_.empty()) {
        say = output_ + ": written again";
    }
    error_ = error;
    return say;
}

}  // namespace msmon
