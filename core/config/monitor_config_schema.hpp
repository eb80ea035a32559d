// Which msprobe monitor a config is for — v1 (TrainerMon) or monitor_v2 (TrainerMonitorV2) — and that version's
// field table, validation and aborting fields, so callers (msmon config, the Config tab) handle both alike.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/config/monitor_config_fields.hpp"

namespace msmon {

enum class MonitorConfigVersion { v1, v2 };

// v2 when the config has a `monitors` key, or keys only monitor_v2 reads (stop_step, output_dir, framework, rank,
// patch_optimizer_step, async_write) and none that only v1 reads; v1 otherwise (an empty config too).
MonitorConfigVersion monitor_config_version(const nlohmann::ordered_json& config);

// "v1" / "v2", and how a user would name it: "msprobe monitor v1 (TrainerMon)".
const char* version_id(MonitorConfigVersion version);
const char* version_title(MonitorConfigVersion version);

// v1 has msprobe's dynamic mode (dynamic_on, collect_times reset, the trainer's write-back); v2 reads the file once.
bool has_dynamic_mode(MonitorConfigVersion version);

const std::vector<ConfigField>& monitor_config_fields(MonitorConfigVersion version);

// A field's key path: {"monitors", "cc", "cc_log_only"} for "monitors.cc.cc_log_only".
std::vector<std::string> field_path(const ConfigField& field);

// The config checked by the rules of its own version.
ConfigCheck check_monitor_config(const nlohmann::ordered_json& config);
// ... as a config of `version` (an editor keeps the version the file had: an edit does not switch it).
ConfigCheck check_monitor_config(const nlohmann::ordered_json& config, MonitorConfigVersion version);

// The config, by its own version, has a field set that aborts (or, v2, may interrupt) training.
bool monitor_config_aborts_training(const nlohmann::ordered_json& config);
bool monitor_config_aborts_training(const nlohmann::ordered_json& config, MonitorConfigVersion version);

// The aborting fields in words, for refusals: "print_struct or cc_distribution.cc_log_only".
const char* aborting_fields_text(MonitorConfigVersion version);

}  // namespace msmon
