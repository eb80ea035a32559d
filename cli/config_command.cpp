// msmon config: show the monitor config with msprobe's validation, and change it safely while training runs.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/args/arg_parser.hpp"
#include "core/config/config_file.hpp"
#include "core/config/config_patch.hpp"
#include "core/config/guarded_save.hpp"
#include "core/config/monitor_config_schema.hpp"
#include "core/config/monitor_v2_config_fields.hpp"
#include "core/text/display_escape.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

using json = nlohmann::ordered_json;

const CommandSpec kConfigSpec{
    "config",
    "show|enable|stop|disable|set CONFIG [--collect-times N] [KEY=VALUE ...] [--yes]",
    "Reads and changes msprobe's monitor config while the job runs (dynamic mode: DYNAMIC_MONITOR=True).\n"
    "  show     the config, msprobe's validation (rejections, silent fallbacks) and every field\n"
    "  enable   start a collection: dynamic_on true and collect_times reset (--collect-times N)\n"
    "  stop     end a running collection early: dynamic_on true with collect_times 0 (msprobe ignores\n"
    "           dynamic_on false while collecting; this collects one more step, then stops)\n"
    "  disable  dynamic_on false: no collection starts on the next reload (a running one continues)\n"
    "  set      KEY=VALUE ... (VALUE is JSON, else a string; alert.dump=true sets a nested key)\n"
    "Writes are atomic (temp file, fsync, rename in the config's folder) and keep the owner, the mode, unknown\n"
    "keys and key order. A link to the config, or another user's link on its way, is refused (see\n"
    "--follow-config-link).\n"
    "msmon waits for a trainer write-back burst to end before writing, watches the file for --settle-ms after\n"
    "it, and writes the change again if a write-back raced it (exit 1 if it never stuck). A config msprobe would\n"
    "reject is not written. print_struct and cc_distribution.cc_log_only abort\n"
    "training: changing them needs --yes.\n"
    "A monitor_v2 config (TrainerMonitorV2: a `monitors` object, or keys such as stop_step and output_dir) is\n"
    "shown and checked by monitor_v2's own rules, its nested fields set by path (monitors.weight_grad.enabled=true);\n"
    "monitors.cc.cc_log_only may interrupt training and needs --yes. monitor_v2 reads its config once, when the\n"
    "job starts: it has no dynamic mode, so enable, stop and disable refuse it (set start_step/stop_step and\n"
    "restart the job).",
    {
        {"--collect-times", "N", "with enable: how many collections (resets the count)"},
        {"--yes", "", "write even though the change aborts training (print_struct, cc_log_only)"},
        {"--json", "", "print the config and the validation (show), or what was written (other actions), as JSON"},
        {"--step-ms", "MS",
         "the job's step time: after saving over a running collection, msmon watches one step for "
         "the collection's final write-back, which would swallow the change (default: unknown)"},
        {"--settle-ms", "MS",
         "after a write, watch this long for a racing trainer write-back (default 300; keep it "
         "under one training step)"},
        {kFollowConfigLinkOption, "",
         "CONFIG is a symbolic link (or a link someone else owns is on its way) and you mean it: follow it\n"
         "once and write the file it names then (without this, msmon refuses links: whoever can write the\n"
         "folder could point one at any file)"},
    },
    2,
    0,
};

std::vector<std::string> split_key(const std::string& dotted) {
    std::vector<std::string> path;
    std::size_t start = 0;
    while (true) {
        const auto dot = dotted.find('.', start);
        path.push_back(dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (dot == std::string::npos) return path;
        start = dot + 1;
    }
}

json stamp_json(const FileStamp& s) {
    return json{{"inode", static_cast<unsigned long long>(s.ino)},
                {"mtime_sec", static_cast<long long>(s.mtime.tv_sec)},
                {"mtime_nsec", static_cast<long long>(s.mtime.tv_nsec)}};
}

void print_check(const ConfigCheck& check) {
    for (const auto& e : check.errors) std::printf("  REJECTED by msprobe: %s\n", escape_for_display(e).c_str());
    for (const auto& w : check.warnings) std::printf("  warning: %s\n", escape_for_display(w).c_str());
}

}  // namespace

int run_config_command(int argc, char** argv) {
    bool help = false;
    std::string error;
    auto args = parse_args(kConfigSpec, argc, argv, 2, help, error);
    if (help) {
        std::fputs(render_help(kConfigSpec).c_str(), stdout);
        return kExitOk;
    }
    auto usage_error = [](const std::string& msg) {
        std::fprintf(stderr, "msmon config: %s\n", escape_for_terminal(msg).c_str());
        return kExitUsage;
    };
    if (!args) return usage_error(error);
    const std::string verb = args->positional[0];
    const std::string path = args->positional[1];
    const std::vector<std::string> assignments(args->positional.begin() + 2, args->positional.end());
    if (verb != "show" && verb != "enable" && verb != "stop" && verb != "disable" && verb != "set")
        return usage_error("unknown action '" + verb + "' (show, enable, stop, disable, set)");
    if (verb != "set" && !assignments.empty()) return usage_error("KEY=VALUE goes with set");
    if (verb == "set" && assignments.empty()) return usage_error("set needs KEY=VALUE");
    std::optional<long long> collect_times;
    if (auto n = args->value("--collect-times")) {
        auto v = parse_int(*n);
        if (!v || *v < 0) return usage_error("--collect-times takes a number >= 0");
        if (verb != "enable") return usage_error("--collect-times goes with enable");
        collect_times = *v;
    }

    const ConfigTarget target(path, args->has(kFollowConfigLinkOption));
    ConfigRead read = read_monitor_config(target);
    if (read.status != ConfigRead::Status::ok) {
        // A refused link or file names itself; other errors need the path.
        const bool names_itself = read.error.compare(0, path.size(), path) == 0;
        std::fprintf(stderr, "msmon config: %s%s\n",
                     names_itself ? "" : ("cannot read " + escape_for_terminal(path) + ": ").c_str(),
                     escape_for_terminal(read.error).c_str());
        return kExitFailure;
    }
    const MonitorConfigVersion version = monitor_config_version(read.doc);
    if (verb == "show") {
        const json& doc = read.doc;
        const ConfigCheck check = check_monitor_config(doc);
        if (args->has("--json")) {
            json out;
            out["path"] = path;
            out["version"] = version_id(version);
            out["config"] = doc;
            out["errors"] = check.errors;
            out["warnings"] = check.warnings;
            std::printf("%s\n", out.dump(2).c_str());
            return kExitOk;
        }
        std::printf("%s\n", escape_for_terminal(path).c_str());
        std::printf("  %s config\n", version_title(version));
        if (has_dynamic_mode(version))
            std::printf("  dynamic_on %s, collect_times %s (dynamic mode needs DYNAMIC_MONITOR=True in the job)\n",
                        escape_for_display(doc.value("dynamic_on", json(false)).dump(), 40).c_str(),
                        escape_for_display(doc.value("collect_times", json("default 1e8")).dump(), 40).c_str());
        else
            std::printf("  read once, when the job starts (no dynamic mode); collects %s\n",
                        escape_for_display(monitor_v2_window_text(doc)).c_str());
        print_check(check);
        if (check.ok() && check.warnings.empty()) std::printf("  msprobe accepts this config as it is\n");
        const auto& fields = monitor_config_fields(version);
        int name_w = 22;
        for (const auto& f : fields) name_w = std::max(name_w, static_cast<int>(std::string(f.name).size()) + 1);
        std::printf("\n%-*s %-6s %-14s %s\n", name_w, "field", "type", "value", "what / msprobe's rule");
        for (const auto& f : fields) {
            const json* v = find_path(doc, field_path(f));
            const std::string value = v ? v->dump() : std::string("(") + f.fallback + ")";
            std::printf(
                "%-*s %-6s %-14s %s%s; %s\n", name_w, f.name, f.type, escape_for_display(value, 14).c_str(), f.help,
                f.aborts_training ? (has_dynamic_mode(version) ? " [ABORTS TRAINING]" : " [MAY ABORT TRAINING]") : "",
                f.rule);
        }
        return kExitOk;
    }
    if (!has_dynamic_mode(version) && verb != "set") {
        std::fprintf(stderr,
                     "msmon config: %s is a monitor_v2 config (TrainerMonitorV2): it has no dynamic mode, so there "
                     "is no collection to %s — nothing was written. monitor_v2 reads the file once, when the job "
                     "starts: choose what to collect with `msmon config set %s start_step=N stop_step=M "
                     "monitors.weight_grad.enabled=true` (stop_step is excluded) and restart the job.\n",
                     escape_for_terminal(path).c_str(), verb == "enable" ? "start" : "stop",
                     escape_for_terminal(path).c_str());
        return kExitFailure;
    }
    std::optional<long long> settle_ms;
    if (auto v = args->value("--settle-ms")) {
        settle_ms = parse_int(*v);
        if (!settle_ms || *settle_ms < 0 || *settle_ms > 60000) return usage_error("--settle-ms takes 0..60000");
    }
    ConfigPatch patch;
    if (verb == "enable") {
        patch.push_back({{"dynamic_on"}, json(true)});
        if (collect_times) patch.push_back({{"collect_times"}, json(*collect_times)});
    } else if (verb == "stop") {
        patch.push_back({{"dynamic_on"}, json(true)});
        patch.push_back({{"collect_times"}, json(0)});
    } else if (verb == "disable") {
        patch.push_back({{"dynamic_on"}, json(false)});
    } else {
        for (const auto& a : assignments) {
            const auto eq = a.find('=');
            if (eq == std::string::npos || eq == 0) return usage_error("'" + a + "' is not KEY=VALUE");
            const std::string text = a.substr(eq + 1);
            json value;
            try {
                value = json::parse(text);
            } catch (const json::parse_error&) {
                value = text;  // a plain word: a string
            }
            patch.push_back({split_key(a.substr(0, eq)), std::move(value)});
        }
    }
    const bool yes = args->has("--yes");
    const SaveVeto veto = [yes](const json& before, const json& after) -> std::string {
        // Judged as the version the file is: a set that drops `monitors` does not make msprobe's v2 read it as v1.
        const MonitorConfigVersion version = monitor_config_version(before);
        const ConfigCheck c = check_monitor_config(after, version);
        if (!c.ok()) {
            std::string why = "not written — msprobe would reject it:";
            for (const auto& e : c.errors) why += "\n  " + e;
            return why;
        }
        if (monitor_config_aborts_training(after, version) && !monitor_config_aborts_training(before, version) && !yes)
            return std::string("not written — ") + aborting_fields_text(version) +
                   (has_dynamic_mode(version) ? " ABORTS training" : " MAY INTERRUPT training (msprobe's docs)") +
                   "; add --yes to write it anyway";
        return {};
    };
    SaveTiming timing;
    if (settle_ms) timing.settle_ms = static_cast<int>(*settle_ms);
    if (auto v = args->value("--step-ms")) {
        const auto step_ms = parse_int(*v);
        if (!step_ms || *step_ms < 0 || *step_ms > 3600000) return usage_error("--step-ms takes 0..3600000");
        timing.step_ms = static_cast<int>(*step_ms);
    }
    const SaveReport report = guarded_save(target, patch, veto, timing);
    if (args->has("--json")) {
        json out;
        out["path"] = path;
        out["action"] = verb;
        out["in_effect"] = report.in_effect;
        out["writes"] = json::array();
        for (std::size_t i = 0; i < report.writes.size(); ++i) {
            json w = stamp_json(report.writes[i]);
            w["written_at_ns"] =
                static_cast<long long>(report.written_at[i].tv_sec) * 1000000000LL + report.written_at[i].tv_nsec;
            out["writes"].push_back(std::move(w));
        }
        out["notices"] = report.notices;
        out["error"] = report.error;
        if (!report.writes.empty()) out["config"] = report.saved;
        std::printf("%s\n", out.dump(2).c_str());
        return report.in_effect ? kExitOk : kExitFailure;
    }
    for (const auto& n : report.notices) std::fprintf(stderr, "msmon config: %s\n", escape_for_terminal(n).c_str());
    if (!report.in_effect) {
        std::fprintf(stderr, "msmon config: %s\n", escape_for_terminal(report.error).c_str());
        return kExitFailure;
    }
    const json& doc = report.saved;
    const ConfigCheck check = check_monitor_config(doc);
    const bool v2_saved = !has_dynamic_mode(monitor_config_version(doc));
    if (verb == "set" && !v2_saved && doc.value("dynamic_on", json(false)) == json(true))
        std::printf(
            "dynamic_on is true: the trainer reloads on this save, which restarts the collection (count from 0, "
            "anomaly.json emptied if alert.dump).\n");
    print_check(check);
    if (verb == "enable")
        std::printf(
            "collection starts at the trainer's next step: dynamic_on true, collect_times %s (counted from 0 "
            "again). The job must run with DYNAMIC_MONITOR=True.\n",
            escape_for_display(doc.value("collect_times", json("default")).dump(), 40).c_str());
    else if (verb == "stop")
        std::printf(
            "the running collection ends after one more step (dynamic_on true, collect_times 0); msprobe then "
            "writes dynamic_on false back.\n");
    else if (verb == "disable")
        std::printf(
            "dynamic_on false: no new collection starts; a collection already running continues until its "
            "collect_times (use `msmon config stop` to end it).\n");
    else std::printf("written: %s\n", escape_for_terminal(path).c_str());
    if (v2_saved)
        std::printf("monitor_v2 reads its config once, when the job starts: this applies at the job's next start.\n");
    return kExitOk;
}

const CommandSpec& config_command_spec() {
    return kConfigSpec;
}

}  // namespace msmon
