// --faults LIST for the simulator: "spike@12,nan@20" or with a rank, "nan@20:r3", "spike@40:r0x50"; "stop@30"
// ends the job at step 30 the way MindFormers' data skip does (consecutive global-norm spikes, then
// ValueError).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace msmon {

struct Fault {
    enum class Type { spike, nan, stop } type = Type::spike;
    std::int64_t step = 0;
    int rank = -1;        // -1: every rank
    double factor = 100;  // spike: gradients multiplied by this
};

std::optional<std::vector<Fault>> parse_fault_list(std::string_view text, std::string& error);

// The earliest stop@ step in `faults`, or -1.
std::int64_t first_stop_step(const std::vector<Fault>& faults);

}  // namespace msmon
