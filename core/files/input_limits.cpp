// The process's bounds (see the header).
#include "core/files/input_limits.hpp"

namespace msmon {

namespace {

InputLimits& limits() {
    static InputLimits l;
    return l;
}

}  // namespace

const InputLimits& input_limits() {
    return limits();
}

void set_input_limits(const InputLimits& l) {
    limits() = l;
}

}  // namespace msmon
