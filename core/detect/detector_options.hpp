// Settings of msmon's own detectors (flags of `msmon ingest`, or defaults).
#pragma once

#include <optional>
#include <string>

namespace msmon {

struct DetectorOptions {
    std::optional<std::string> monitor_config_text;  // the job's msprobe config (--monitor-config): alert rules
    double global_norm_threshold = 3.0;              // MindFormers' global_norm_spike_threshold default
    std::int64_t global_norm_count_threshold = 10;   // ... and global_norm_spike_count_threshold
    std::optional<double> embedding_norm_threshold;  // embedding_local_norm_threshold; none: not checked
    double cross_rank_mad_k = 6.0;                   // robust z-score (|x - median| / (1.4826·MAD)) to flag a rank
    double cross_rank_min_ratio = 0.5;               // and at least this relative distance from the median
    int cross_rank_min_ranks = 4;
    double stall_factor = 5.0;  // no new step for this many median step times while others advance
    int stall_min_intervals = 5;
};

}  // namespace msmon
