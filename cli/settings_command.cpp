// msmon settings: which settings file applies, what it sets, and what in it is wrong (file and line).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/args/arg_parser.hpp"
#include "core/config/msmon_settings.hpp"
#include "core/text/display_escape.hpp"

namespace msmon {

namespace {

const CommandSpec kSettingsSpec{
    "settings",
    "[--json]",
    "Prints msmon's own settings as they apply: the file read ($MSMON_CONFIG, else config.json or config.toml in\n"
    "$XDG_CONFIG_HOME/msmon or ~/.config/msmon), each setting's value, and each problem with its line. A\n"
    "wrong entry is left at its default and the rest apply; exit 1 when there is a problem.\n"
    "Settings: notify.bell, notify.desktop (true/false), on_incident.command (for /bin/sh -c),\n"
    "on_incident.timeout_s (seconds), theme (\"default\" or \"mono\"), x_axis (\"step\", \"wall\" or\n"
    "\"elapsed\": the Chart's x axis at start). Flags on a command line win over them.",
    {{"--json", "", "print them as one JSON document"}},
    0,
    0,
};

}  // namespace

int run_settings_command(int argc, char** argv) {
    bool help = false;
    std::string error;
    auto args = parse_args(kSettingsSpec, argc, argv, 2, help, error);
    if (help) {
        std::fputs(render_help(kSettingsSpec).c_str(), stdout);
        return kExitOk;
    }
    if (!args) {
        std::fprintf(stderr, "msmon settings: %s\n", escape_for_terminal(error).c_str());
        return kExitUsage;
    }
    const LoadedSettings loaded = load_settings();
    const MsmonSettings& s = loaded.settings;
    if (args->has("--json")) {
        nlohmann::ordered_json j;
        j["file"] = loaded.path.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(loaded.path);
        j["notify"] = {{"bell", s.bell}, {"desktop", s.desktop_notify}};
        j["on_incident"] = {{"command", s.on_incident}, {"timeout_s", s.on_incident_timeout_s}};
        j["theme"] = s.theme;
        j["x_axis"] = s.x_axis;
        const auto mib = [](std::int64_t bytes) { return bytes / InputLimits::kMiB; };
        j["limits"] = {{"json_document_mib", mib(s.limits.json_document)},
                       {"prom_file_mib", mib(s.limits.prom_file)},
                       {"clickhouse_answer_mib", mib(s.limits.clickhouse_answer)},
                       {"clickhouse_inflated_mib", mib(s.limits.clickhouse_inflated)},
                       {"event_record_mib", mib(s.limits.event_record)}};
        j["problems"] = loaded.messages();
        std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
        std::printf("file: %s\n",
                    loaded.path.empty() ? "none (the defaults apply)" : escape_for_terminal(loaded.path).c_str());
        std::printf("notify.bell = %s\nnotify.desktop = %s\n", s.bell ? "true" : "false",
                    s.desktop_notify ? "true" : "false");
        std::printf("on_incident.command = %s\non_incident.timeout_s = %g\ntheme = %s\nx_axis = %s\n",
                    s.on_incident.empty() ? "(none)" : escape_for_terminal(s.on_incident).c_str(),
                    s.on_incident_timeout_s, s.theme.c_str(), s.x_axis.c_str());
        std::printf(
            "limits.json_document_mib = %lld\nlimits.prom_file_mib = %lld\nlimits.clickhouse_answer_mib = %lld\n"
            "limits.clickhouse_inflated_mib = %lld\nlimits.event_record_mib = %lld\n",
            static_cast<long long>(s.limits.json_document / InputLimits::kMiB),
            static_cast<long long>(s.limits.prom_file / InputLimits::kMiB),
            static_cast<long long>(s.limits.clickhouse_answer / InputLimits::kMiB),
            static_cast<long long>(s.limits.clickhouse_inflated / InputLimits::kMiB),
            static_cast<long long>(s.limits.event_record / InputLimits::kMiB));
        for (const auto& m : loaded.messages())
            std::fprintf(stderr, "msmon settings: %s\n", escape_for_terminal(m).c_str());
    }
    return loaded.problems.empty() ? kExitOk : kExitFailure;
}

const CommandSpec& settings_command_spec() {
    return kSettingsSpec;
}

}  // namespace msmon
