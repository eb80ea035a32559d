// The thresholds of MindFormers' own checks, as the job's config text states them: the pprint dump of the config
// in a worker log, a TensorBoard text summary of `monitor_config` or of `callbacks`, a yaml line.
//   'global_norm_spike_threshold': 3.0        monitor_config: data skip by global norm (and its stop)
//   'global_norm_spike_count_threshold': 2    monitor_config: consecutive spikes before the job stops
//   'embedding_local_norm_threshold': 270.0   CheckpointMonitor or monitor_config.health_checkpoint
#pragma once

#include <string_view>
#include <vector>

namespace msmon {

inline constexpr const char* kSpikeThresholdKey = "global_norm_spike_threshold";
inline constexpr const char* kSpikeCountThresholdKey = "global_norm_spike_count_threshold";
inline constexpr const char* kEmbeddingThresholdKey = "embedding_local_norm_threshold";

struct ThresholdInText {
    const char* key;  // one of the three keys above
    double value;
};

// Each of the three keys the text sets to a number, quoted or not, after ':' or '='; the first of each key.
// Cheap on text without "_threshold" (every log line is offered).
std::vector<ThresholdInText> thresholds_in_text(std::string_view text);

}  // namespace msmon
