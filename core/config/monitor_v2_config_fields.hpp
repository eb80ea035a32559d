// The msprobe monitor_v2 config (TrainerMonitorV2, core/monitor_v2/trainer.py): one table of fields — the nested
// monitors.<name>.<key> ones by their dotted path — that drives both validation and the editor, as the v1 table does.
// v2 reads the file once, when the job starts: it has no dynamic mode (no dynamic_on, no write-back).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/config/monitor_config_fields.hpp"

namespace msmon {

// Every field TrainerMonitorV2 and its five monitors read, top level first, then monitors.module … monitors.cc.
const std::vector<ConfigField>& monitor_v2_config_fields();

// What TrainerMonitorV2.__init__ and each monitor's set_config/start do with the config: errors where msprobe
// raises (the job does not start), warnings where it falls back to a default or ignores a key.
ConfigCheck validate_monitor_v2_config(const nlohmann::ordered_json& config);

// monitors.cc is enabled with cc_log_only a real `true`: msprobe's docs warn that it may interrupt training.
bool monitor_v2_aborts_training(const nlohmann::ordered_json& config);

// What the job will collect, as msprobe derives it from the file it reads at start: "steps 10-19, every step;
// monitors module, weight_grad", "from step 0, every step, at most 100 times; monitors weight_grad".
std::string monitor_v2_window_text(const nlohmann::ordered_json& config);

}  // namespace msmon
