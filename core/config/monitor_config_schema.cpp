// Telling v1 and v2 configs apart, and dispatching to the version's table and rules.
#include "core/config/monitor_config_schema.hpp"

#include <set>

#include "core/config/monitor_v2_config_fields.hpp"

namespace msmon {

using json = nlohmann::ordered_json;

MonitorConfigVersion monitor_config_version(const json& c) {
    if (!c.is_object()) return MonitorConfigVersion::v1;
    if (c.contains("monitors")) return MonitorConfigVersion::v2;
    static const std::set<std::string> v2_only = {"stop_step", "output_dir",           "framework",
                                                  "rank",      "patch_optimizer_step", "async_write"};
    bool v2_key = false, v1_key = false;
    for (auto it = c.begin(); it != c.end(); ++it) {
        v2_key = v2_key || v2_only.count(it.key());
        for (const auto& f : monitor_config_fields(MonitorConfigVersion::v1)) {
            bool shared = false;
            for (const auto& g : monitor_config_fields(MonitorConfigVersion::v2)) shared = shared || it.key() == g.name;
            v1_key = v1_key || (it.key() == f.name && !shared);
        }
    }
    return v2_key && !v1_key ? MonitorConfigVersion::v2 : MonitorConfigVersion::v1;
}

const char* version_id(MonitorConfigVersion v) {
    return v == MonitorConfigVersion::v2 ? "v2" : "v1";
}

const char* version_title(MonitorConfigVersion v) {
    return v == MonitorConfigVersion::v2 ? "msprobe monitor_v2 (TrainerMonitorV2)" : "msprobe monitor v1 (TrainerMon)";
}

bool has_dynamic_mode(MonitorConfigVersion v) {
    return v == MonitorConfigVersion::v1;
}

const std::vector<ConfigField>& monitor_config_fields(MonitorConfigVersion v) {
    return v == MonitorConfigVersion::v2 ? monitor_v2_config_fields() : monitor_config_fields();
}

std::vector<std::string> field_path(const ConfigField& field) {
    std::vector<std::string> path;
    std::string name = field.name;
    std::size_t start = 0;
    for (auto dot = name.find('.'); dot != std::string::npos; dot = name.find('.', start)) {
        path.push_back(name.substr(start, dot - start));
        start = dot + 1;
    }
    path.push_back(name.substr(start));
    return path;
}

ConfigCheck check_monitor_config(const json& c) {
    return check_monitor_config(c, monitor_config_version(c));
}

ConfigCheck check_monitor_config(const json& c, MonitorConfigVersion v) {
    return v == MonitorConfigVersion::v2 ? validate_monitor_v2_config(c) : validate_monitor_config(c);
}

bool monitor_config_aborts_training(const json& c) {
    return monitor_config_aborts_training(c, monitor_config_version(c));
}

bool monitor_config_aborts_training(const json& c, MonitorConfigVersion v) {
    return v == MonitorConfigVersion::v2 ? monitor_v2_aborts_training(c) : config_aborts_training(c);
}

const char* aborting_fields_text(MonitorConfigVersion v) {
    return v == MonitorConfigVersion::v2 ? "monitors.cc.cc_log_only (with monitors.cc enabled)"
                                         : "print_struct or cc_distribution.cc_log_only";
}

}  // namespace msmon
