// The rules that compare ranks: an agent judges them over its own node's ranks only, the job-level judge over
// every rank. Where the judge has judged a step, readers of the whole job show its findings of these rules and
// not the agents' (a replica departing from its twins on another node is, on its own node, a tie or nothing).
#pragma once

#include <string_view>

namespace msmon {

inline constexpr std::string_view kJobLevelRules[] = {"ReplicaDivergence", "ReplicaTie", "CrossRankOutlier",
                                                      "OptimizerStep", "StalledRank"};

}  // namespace msmon
