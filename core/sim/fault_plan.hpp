// --faults LIST for the simulator: comma-separated TYPE@STEP[:rRANK][:mMODULE][xFACTOR].
//   spike@S[:rR][xF]   every gradient ×F (default 100) at step S, on every rank or on rank R only
//   nan@S[:rR][:mM]    a NaN in module M's output (default: a module mid-network) on rank R (every rank if none);
//                      it flows forward, back, through the all-reduce to every rank, and stays
//   baddata@S:rR[xF]   rank R's batch at step S is ×F (default 25): the input and the residual stream
//   drift@S[:mM][xF]   from step S one module's values grow smoothly to ×F (default 10) at the last step
//   stall@S:rR         rank R writes nothing after step S while the others go on
//   restart@S          the job restarts after step S: new run folders resume at the last multiple of 10 before S
//   stop@S             MindFormers' data skip ends the job at step S (spikes at S-1 and S, then ValueError)
// MODULE is a module name as the CSVs write it ("module.module.decoder.layers.1.mlp.linear_fc2"), or a unique
// tail of one ("layers.1.mlp.linear_fc2"); ".input"/".output"/".weight" after it are accepted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace msmon {

struct Fault {
    enum class Type { spike, nan, stop, baddata, drift, stall, restart } type = Type::spike;
    std::int64_t step = 0;
    int rank = -1;        // -1: every rank
    double factor = 100;  // spike: gradients ×; baddata: the batch ×; drift: the module grows to ×
    std::string module;   // nan, drift: as written in the fault (resolved by the simulator); empty: the default
    // restart: the step the new run folders begin at (`msmon simulate --restart-at`: the step after the last
    // checkpoint). -1: the last multiple of 10 before `step`, as restart@S writes.
    std::int64_t resume = -1;
};

std::optional<std::vector<Fault>> parse_fault_list(std::string_view text, std::string& error);

// The name a fault type is written with ("spike", "baddata", ...).
std::string_view fault_type_name(Fault::Type type);

// The earliest stop@ step in `faults`, or -1.
std::int64_t first_stop_step(const std::vector<Fault>& faults);

}  // namespace msmon
