// One anomaly, from msprobe's dump or from msmon's own detectors: what the table, the CLI and the store share.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace msmon {

struct AnomalyRecord {
    std::string source;  // "msprobe" (from anomaly.json) or "detected" (msmon's detectors)
    // AnomalyTurbulence, AnomalyNan, CrossRankOutlier, GlobalNormSpike, EmbeddingNormHigh, StalledRank
    std::string rule;
    int rank = 0;
    std::int64_t step = 0;
    std::optional<std::int64_t> micro_step;
    std::string kind;  // msprobe prefix (grad_reduced, actv, ...) or MindFormers metric (loss, global_norm, ...)
    std::string vpp_stage;
    std::string name;
    std::string op;
    double value = 0;
    std::optional<double> reference;  // history mean, cross-rank median, or threshold
    std::string message;
    std::string tag_name;  // msprobe's "<vpp>:<name>[:<micro>]/rank<r>/<task>"
    // Fields of a msprobe dump entry (and of msprobe-compatible detections, for analyser ordering).
    std::string key;  // "<tag_name>_step_<step>_call_<call_id>"
    std::int64_t call_id = -1;
    std::int64_t pp_stage = 0;
    std::int64_t vpp = 0;
    std::vector<int> group_mates;
    double score = 0;  // msmon's ranking: higher is more worth a look
};

}  // namespace msmon
