// Settings of msmon's own detectors (flags of `msmon ingest`, or defaults).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "core/detect/series_checks.hpp"

namespace msmon {

struct DetectorOptions {
    std::optional<std::string> monitor_config_text;  // the job's msprobe config (--monitor-config): alert rules
    // MindFormers' own checks, when a flag sets them (--global-norm-threshold, --global-norm-count,
    // --embedding-threshold). Unset: the job's own values, else MindFormers' defaults (core/detect/job_thresholds).
    std::optional<double> global_norm_threshold;              // global_norm_spike_threshold
    std::optional<std::int64_t> global_norm_count_threshold;  // global_norm_spike_count_threshold
    std::optional<double> embedding_norm_threshold;           // embedding_local_norm_threshold
    SeriesCheckOptions series;                                // non-finite and jump checks on every series' own history
    // Following a job: how long a (rule, rank, kind, step) group of findings waits for the rank's next step
    // before it is emitted anyway (the rank may never write again: a NaN that stopped the job).
    std::chrono::steady_clock::duration fold_max_wait = std::chrono::seconds(5);
    // Cross-rank outliers, on log|x|: a rank at least cross_rank_min_ratio times (or 1/that) the median of the
    // ranks, and cross_rank_mad_k robust deviations of the ranks' spread (this step's, or the series' usual
    // spread if larger: ranks fed different data differ every step, and that is not a fault).
    double cross_rank_mad_k = 6.0;
    double cross_rank_min_ratio = 10.0;
    int cross_rank_min_ranks = 4;
    // Values waiting for the other ranks held in memory up to this; beyond it they are read back from the store
    // when their step is judged (a one-shot catch-up reads rank by rank: a whole file waits for the next ranks).
    std::size_t cross_rank_memory_bytes = std::size_t{16} << 20;
    double stall_factor = 5.0;       // no new step for this many median step times while others advance
    double stall_min_seconds = 1.0;  // and for at least this long
    int stall_min_intervals = 5;     // live step times seen (catch-up arrivals are not step times)
};

}  // namespace msmon
