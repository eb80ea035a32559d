// A change to the monitor config as a list of key paths and their new values, so that the same change can be
// applied again on top of a file someone else rewrote meanwhile (the trainer's write-back, another person).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace msmon {

struct ConfigChange {
    std::vector<std::string> path;                // {"alert", "dump"}; object keys may contain dots
    std::optional<nlohmann::ordered_json> value;  // nullopt: the key is removed
};

using ConfigPatch = std::vector<ConfigChange>;

// Sets (or removes) each path; missing or non-object parents become objects. New keys go last, as msprobe's own
// write-back appends them; existing keys keep their place.
nlohmann::ordered_json apply_patch(nlohmann::ordered_json doc, const ConfigPatch& patch);

// Equal for msprobe: equal values of the same kind of number (1 and 1.0 differ, as msprobe's eps tells them apart;
// 3 read from a file and 3 typed in are the same).
bool same_config_value(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b);

// What turns `before` into `after`: changed leaves, recursing into objects present on both sides.
ConfigPatch diff_configs(const nlohmann::ordered_json& before, const nlohmann::ordered_json& after);

// "alert.dump" for {"alert", "dump"}.
std::string path_text(const std::vector<std::string>& path);

// One line per change: "dynamic_on: false → true", "my_key: (absent) → 3", "ops: removed".
std::vector<std::string> describe_patch(const nlohmann::ordered_json& before, const ConfigPatch& patch);

// The value at `path`, or nullptr.
const nlohmann::ordered_json* find_path(const nlohmann::ordered_json& doc, const std::vector<std::string>& path);

}  // namespace msmon
