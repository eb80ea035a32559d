// The thresholds MindFormers' own checks were judged with, and whose each is (a flag, the job's, MindFormers'
// default): stored as the "thresholds_used" setting by DetectorSet (core/detect/job_thresholds.hpp), shown by
// `msmon health` and the Health tab.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace msmon {

inline constexpr const char* kThresholdsUsedSetting = "thresholds_used";

struct ThresholdUse {
    std::string key;              // global_norm_spike_threshold, global_norm_spike_count_threshold, ...
    std::optional<double> value;  // none: not checked
    std::string source;           // where it came from, in words: "the job's (worker_0.log line 12)"
    bool operator==(const ThresholdUse&) const = default;
};

// One line per threshold: key, value (empty: not checked) and source, tab-separated.
std::string encode_threshold_uses(const std::vector<ThresholdUse>& uses);
std::vector<ThresholdUse> decode_threshold_uses(const std::string& text);

}  // namespace msmon
