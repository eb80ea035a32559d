// The msprobe monitor config (v1 TrainerMon's fields): one table of fields — type, default, range,
// help, whether it aborts training — that drives both validation and the editor.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace msmon {

struct ConfigField {
    const char* name;
    const char* type;      // bool, int, float, str, list, dict
    const char* fallback;  // msprobe's default, as JSON text
    const char* rule;      // what msprobe checks, in words
    const char* help;
    bool aborts_training = false;  // print_struct, cc_distribution.cc_log_only
    bool read_at_start_only = false;
};

// Every field msprobe's v1 monitor reads, in the order of the spec.
const std::vector<ConfigField>& monitor_config_fields();

struct ConfigCheck {
    std::vector<std::string> errors;    // msprobe would reject the config (training dies / reload refused)
    std::vector<std::string> warnings;  // msprobe would replace a value by its default, or it aborts training
    bool ok() const { return errors.empty(); }
};

// print_struct or cc_distribution.cc_log_only is a real `true`: msprobe then stops training after a step.
bool config_aborts_training(const nlohmann::ordered_json& config);

// msprobe's validate_config (and what set_config silently replaces), applied to a parsed config.
ConfigCheck validate_monitor_config(const nlohmann::ordered_json& config);

}  // namespace msmon
