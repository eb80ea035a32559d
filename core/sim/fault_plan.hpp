// --faults LIST for the simulator: comma-separated TYPE@STEP[:rRANK][:mMODULE][xFACTOR].
//   spike@S[:rR][xF]   every gradient ×F (default 100) at step S, on every rank or on rank R only
//   nan@S[:rR][:mM]    a NaN in module M's output (default: a module mid-network) on rank R (every rank if none);
//                      it flows forward, back, through the all-reduce to every rank, and stays
//   baddata@S:rR[xF]   rank R's batch at step S is ×F (default 25): the input and the residual stream
//   drift@S[:mM][xF]   from step S one module's values grow smoothly to ×F (default 10) at the last step
//   stall@S:rR         rank R writes nothing after step S while the others go on
//   restart@S          the job restarts after step S: new run folders resume at the last multiple of 10 before S
//   stop@S             MindFormers' data skip ends the job at step S (spikes at S-1 and S, then ValueError)
//   sdc@S:rR[:mW][xF]  silent data corruption of rank R's copy of weight W (default: a weight mid-network): ×F
//                      (default 1.01) right after step S-1's update; it departs from its replicas from step S on,
//                      its reduced gradient and Adam's moments stay theirs (the all-reduce averages them)
//   sdcgrad@S:rR[:mW][xF]  rank R's all-reduced gradient of weight W ×F (default 1.5) at step S, on that rank
//                      only: its grad_reduced at S, then its moments and weights depart and stay apart
//   lr@S[xF]           from step S on, every rank's learning rate ×F (default 20): every weight's update ×F
//   dead@S[:mM]        from step S on, module M (default: a linear mid-network) outputs zeros on every rank;
//                      what is computed from that output alone is zero too, and no gradient flows back through it
// MODULE is a module name as the CSVs write it ("module.module.decoder.layers.1.mlp.linear_fc2"), or a unique
// tail of one ("layers.1.mlp.linear_fc2"); ".input"/".output"/".weight" after it are accepted. A weight (W) is a
// parameter name as the CSVs write it, a unique tail of one, or the module that owns it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace msmon {

struct Fault {
    enum class Type { spike, nan, stop, baddata, drift, stall, restart, sdc, sdcgrad, lr, dead } type = Type::spike;
    std::int64_t step = 0;
    int rank = -1;  // -1: every rank
    // spike: gradients ×; baddata: the batch ×; drift: the module grows to ×; sdc: the weight ×; sdcgrad: the
    // reduced gradient ×; lr: the learning rate ×
    double factor = 100;
    // nan, drift, dead: a module; sdc, sdcgrad: a weight. As written in the fault (resolved by the simulator); empty:
    // the default.
    std::string module;
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
