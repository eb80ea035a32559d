// One row of one rank at one step as the whole job's store holds it (ClickHouse's points, one value per op,
// gathered back into the row the rank's CSV printed): what the job-level judge reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace msmon {

struct JobRow {
    int rank = 0;
    std::string run;  // the rank's run folder name (e.g. "Nov27_14-26-36-rank1-dff0b55f"), as shipped
    std::string kind, vpp_stage, name;
    std::int64_t micro_step = -1;  // -1: none
    std::int64_t step = 0;
    std::uint64_t order = 0;       // the tensor's place in its agent's store: forward order within a run's kind
    std::vector<std::string> ops;  // numeric ops, in the row's order
    std::vector<double> values;    // one per op
};

}  // namespace msmon
