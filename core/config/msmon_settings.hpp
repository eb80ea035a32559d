// msmon's own settings: one file, $XDG_CONFIG_HOME/msmon/config.json or config.toml (else ~/.config/msmon/), read
// by both programs at start; a flag on the command line wins over it. Every entry is checked; a wrong one is
// reported with its file and line and left at its default, the rest apply (a typo in a settings file must not
// keep the monitor from starting in the middle of a failing run). `msmon settings` prints what applies.
//
//   JSON                                         TOML (the subset below)
//   {                                            [notify]
//     "notify": {"bell": true,                   bell = true
//                "desktop": true},               desktop = true
//     "on_incident": {"command": "CMD",          [on_incident]
//                     "timeout_s": 20},          command = "CMD"
//     "theme": "default",                        timeout_s = 20
//     "x_axis": "step"                           theme = "default"   (before any [table])
//   }                                            x_axis = "step"
//
// keys: {"chart:w": "W"} (TOML: [keys] then "chart:w" = "W") moves a binding of a view (or of "global", the keys
// valid everywhere) to another printable key; help and the hint bar follow.
// theme: "default" (colours), or "mono" (no colours, as NO_COLOR). x_axis: the Chart's x axis at start, "step",
// "wall" (the wall clock) or "elapsed" (time since the first step). TOML: `# comments`, [tables], `key = value`
// with "strings" (\" \\ \n \t escapes), 'literal strings', true/false and numbers.
// limits: {"json_document_mib": 64, "prom_file_mib": 16, "clickhouse_answer_mib": 64, "clickhouse_inflated_mib":
// 256, "event_record_mib": 256} (TOML: [limits]) raise or lower what msmon reads of one file, answer or record.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/files/input_limits.hpp"

namespace msmon {

struct MsmonSettings {
    bool bell = true;
    bool desktop_notify = true;
    std::string on_incident;  // empty: none
    double on_incident_timeout_s = 20;
    std::string theme = "default";  // default | mono
    std::string x_axis = "step";    // the Chart's x axis at start: step | wall | elapsed
    // Key overrides, "VIEW:K" → "K2" (VIEW: overview, chart, anomalies, health, config, experts, layers, or global
    // for the keys valid everywhere), with the line each came from for the TUI's refusals.
    struct KeyOverride {
        std::string key, to;
        int line = 0;
    };
    std::vector<KeyOverride> keys;
    // [limits]: the bounds on what is read (core/files/input_limits.hpp), in MiB in the file.
    InputLimits limits;
};

struct SettingsProblem {
    int line = 0;  // 1-based; 0: the file as a whole
    std::string message;
};

struct LoadedSettings {
    MsmonSettings settings;
    std::string path;  // the file read; empty: none exists (the defaults apply)
    std::vector<SettingsProblem> problems;
    // "PATH line 4: notify.bell must be true or false" per problem.
    std::vector<std::string> messages() const;
};

// `text` as the file at `path` would be read (TOML when path ends in .toml, else JSON).
LoadedSettings parse_settings(const std::string& path, const std::string& text);

// The settings file: $MSMON_CONFIG if set (a path; "" for none), else config.json, else config.toml in
// config_dir(). A file that cannot be read is a problem; none at all is the defaults.
LoadedSettings load_settings();

}  // namespace msmon
