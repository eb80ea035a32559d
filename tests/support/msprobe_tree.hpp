// Test helpers: a msprobe monitor_output tree read whole (every rank folder, every CSV row), and the spread
// measures the simulator is calibrated with — across ranks at one step, |log(x_rank / median over ranks)|, and
// along one rank's series, |log(x_t / x_{t-1})| — per kind (and 1-D / 2-D for weight tensors).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace msmon::test {

struct TreeRow {
    int rank = -1;
    std::string folder;  // the run folder (a restarted job writes new ones)
    std::string kind;    // the file prefix: actv, grad_reduced, ...
    std::string file;
    std::string name;
    long long step = -1;
    int micro = -1;  // -1: no micro_step column
    std::map<std::string, std::string> cells;
    double number(const std::string& column) const;  // NaN when not a number
};

struct MsprobeTree {
    std::vector<std::string> folders;  // sorted
    std::vector<TreeRow> rows;         // in file order, files in name order
};

// Reads <dir>/monitor_output (or `dir` itself when it holds the rank folders).
MsprobeTree read_msprobe_tree(const std::string& dir);

struct Quantiles {
    std::size_t n = 0;
    double median = 0, p95 = 0, p99 = 0, max = 0;
};
struct Spread {
    Quantiles cross, step;
};

// "grad_unreduced/1-D" for a weight tensor of one dimension, "actv" for an activation.
std::string spread_class(const TreeRow& row);
// Per class, of `op`; a series with a non-finite or non-positive value at either end of a pair is skipped.
std::map<std::string, Spread> spread_by_class(const MsprobeTree& tree, const std::string& op = "norm");
// Two trees' spreads side by side, one line per class, for the test log.
std::string spread_table(const std::map<std::string, Spread>& real, const std::map<std::string, Spread>& sim);

}  // namespace msmon::test
