// msmon-tui: the terminal UI over a live job, a demo run, or one rendered frame (--snapshot) for scripts. Arguments
// go through the same table-driven parser as msmon's; the snapshot, the live loop and the demo have their own files.
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/args/arg_parser.hpp"
#include "core/args/command_docs.hpp"
#include "core/config/msmon_settings.hpp"
#include "core/ingest/allocator_policy.hpp"
#include "core/log/logging.hpp"
#include "core/text/display_escape.hpp"
#include "core/text/number_text.hpp"
#include "core/version/build_info.hpp"
#include "store/clickhouse/clickhouse_reader.hpp"
#include "store/store_location.hpp"
#include "tui/demo_job.hpp"
#include "tui/launch_options.hpp"
#include "tui/tab_table.hpp"

using namespace msmon;
using namespace msmon::tui;

namespace {

const CommandSpec kTuiSpec{
    "",
    "[DIR] [--db PATH] [--config PATH] [--poll-ms N] [--demo] [--no-bell] [--no-notify] [--on-incident CMD]\n"
    "       [--snapshot VIEW --size WxH]",
    "Follows a training job's msprobe and MindFormers output live and shows every rank. DIR is the job folder\n"
    "(or monitor_output/, or one rank folder). Also:\n"
    "  msmon-tui --db PATH                               an existing store, read only, following no folder\n"
    "  msmon-tui --store clickhouse://HOST:PORT/DB       the whole job as the agents (msmon ingest --sink) ship it\n"
    "Inside: ? lists every key of the current view.",
    {
        {"--db", "PATH",
         "the store (default: $XDG_CACHE_HOME/msmon/<hash of DIR>.db); without DIR, shows this\n"
         "existing store read-only, following no folder (as msmon query --db reads it)"},
        {kTrustDbFolderOption, "",
         "use a --db (or default store) whose folder someone other than you or root can write, or\n"
         "reached through their link (refused otherwise: they could plant its companion files)"},
        {"--store", "URL", "show the whole job from ClickHouse (clickhouse://HOST:PORT/DB), every node's ranks"},
        {"--job", "ID", "with --store: the job (default: the latest)"},
        {"--poll-ms", "N", "poll every N ms instead of inotify"},
        {"--config", "PATH",
         "the msprobe monitor config the job reads (the Config tab edits it; the job must run\n"
         "with DYNAMIC_MONITOR=True to pick edits up while training)"},
        {"--follow-config-link", "",
         "--config is a symbolic link (or another user's link is on its way) and you mean it: the Config\n"
         "tab follows it (without this, it refuses links: whoever can write the folder could point one\n"
         "at any file)"},
        {"--demo", "",
         "run the built-in simulator live (8 ranks with activations, a loss spike at step 20, a\n"
         "NaN in layer 1's MLP output on rank 3 at step 35 that reaches every rank, the job\n"
         "restarting after step 40 from step 30, found by msmon's own detectors; TensorBoard\n"
         "event files with the run config and MoE expert load, expert 3 of layer_1 taking most\n"
         "tokens from step 10) and open on it"},
        {"--demo-step-ms", "MS", "the demo's pace (default 500 ms per step)"},
        {"--baseline", "DIR|DB",
         "compare with another run: a job folder (read into its own store first) or a store; the\n"
         "Chart draws its same series faint (x: the ratio to it)"},
        {"--no-bell", "", "no terminal bell for a new incident"},
        {"--no-notify", "", "no desktop notification (OSC 9 / OSC 777) for a new incident"},
        {"--on-incident", "CMD",
         "run CMD (by /bin/sh -c) once per new incident seen while watching, the incident as one\n"
         "JSON object on its stdin (as msmon ingest --on-incident)"},
        {"--on-incident-timeout", "S", "kill an --on-incident run after S seconds (default 20)"},
        {"--snapshot", "VIEW", "ingest, print one frame of VIEW (" + tab_names() + ")\nas text, exit"},
        {"--size", "WxH", "the snapshot's size (default 120x40)"},
        {"--version", "", "the version, the commit it was built from and the build date"},
        {"--docs", "DIR", "write msmon-tui's man page and bash/zsh completions into DIR, and exit"},
    },
    0,
    1,
    "msmon-tui",
};

int usage_error(const std::string& msg) {
    std::fprintf(stderr, "msmon-tui: %s\n%s", escape_for_terminal(msg).c_str(), render_help(kTuiSpec).c_str());
    return 2;
}

// The options, checked; a usage error's exit code otherwise.
std::optional<int> parse_launch(int argc, char** argv, LaunchOptions& o) {
    bool help = false;
    std::string error;
    const auto args = parse_args(kTuiSpec, argc, argv, 1, help, error);
    if (help) {
        std::fputs(render_help(kTuiSpec).c_str(), stdout);
        return 0;
    }
    if (!args) return usage_error(error);
    if (!args->positional.empty()) o.dir = args->positional[0];
    o.db = args->value("--db").value_or("");
    o.store = args->value("--store").value_or("");
    o.job = args->value("--job").value_or("");
    o.config_path = args->value("--config").value_or("");
    o.follow_config_link = args->has("--follow-config-link");
    o.store_access.trust_folder = args->has(kTrustDbFolderOption);
    o.snapshot = args->value("--snapshot").value_or("");
    o.demo = args->has("--demo");
    // msmon's settings file under the flags: a flag wins.
    const LoadedSettings settings = load_settings();
    for (const auto& m : settings.messages()) {
        std::fprintf(stderr, "msmon-tui: settings: %s\n", escape_for_terminal(m).c_str());
        o.settings_notice = "settings: " + m;
    }
    set_input_limits(settings.settings.limits);
    o.bell = settings.settings.bell && !args->has("--no-bell");
    o.desktop_notify = settings.settings.desktop_notify;
    o.on_incident = settings.settings.on_incident;
    o.on_incident_timeout_ms = static_cast<int>(settings.settings.on_incident_timeout_s * 1000);
    o.mono = settings.settings.theme == "mono";
    o.x_axis = settings.settings.x_axis;
    o.settings_path = settings.path;
    for (const auto& k : settings.settings.keys) o.keys.emplace_back(k.key, k.to);
    o.baseline = args->value("--baseline").value_or("");
    if (args->has("--no-notify")) o.desktop_notify = false;
    if (args->has("--on-incident")) {
        o.on_incident = *args->value("--on-incident");
        if (o.on_incident.find_first_not_of(" \t") == std::string::npos)
            return usage_error("--on-incident needs a command");
    }
    if (auto v = args->value("--on-incident-timeout")) {
        const auto d = parse_double(*v);
        if (!d || !(*d > 0) || *d > 86400) return usage_error("--on-incident-timeout takes seconds (0 < S <= 86400)");
        o.on_incident_timeout_ms = static_cast<int>(*d * 1000);
    }
    if (auto v = args->value("--demo-step-ms")) {
        const auto n = parse_int(*v);
        if (!n || *n < 10 || *n > 60000) return usage_error("--demo-step-ms takes 10..60000");
        o.demo_step_ms = static_cast<int>(*n);
    }
    if (auto v = args->value("--poll-ms")) {
        const auto n = parse_int(*v);
        if (!n || *n <= 0 || *n > 3600000) return usage_error("--poll-ms takes a number of milliseconds (1..3600000)");
        o.poll_ms = static_cast<int>(*n);
    }
    if (auto v = args->value("--size")) {
        unsigned w = 0, h = 0;
        char extra = 0;
        if (std::sscanf(v->c_str(), "%ux%u%c", &w, &h, &extra) != 2 || w < 20 || h < 6 || w > 1000 || h > 500)
            return usage_error("--size takes WxH from 20x6 to 1000x500, e.g. 80x24");
        o.width = static_cast<int>(w);
        o.height = static_cast<int>(h);
    }
    return std::nullopt;
}

}  // namespace

// --docs DIR: the man page and completions, from kTuiSpec (as --help is).
int write_docs(const std::string& dir) {
    ProgramDocs d;
    d.program = "msmon-tui";
    d.tagline = "monitor large-model training live in a terminal";
    d.description =
        "msmon-tui follows a training job's msprobe and MindFormers output live (inotify, or polling) and shows every "
        "rank: per-rank sparklines, full charts, the anomaly table with drill-down to the rank, tensor and step, "
        "checkpoint health, the layers of the model, and a safe editor for msprobe's dynamic monitor config. "
        "Inside, ? lists the keys of the current view. msmon(1) is the same engine without the screen.";
    d.commands = {&kTuiSpec};
    d.version = build_info().version;
    d.date = build_info().date;
    std::string error;
    if (!write_program_docs(d, dir, error)) {
        std::fprintf(stderr, "msmon-tui: %s\n", escape_for_terminal(error).c_str());
        return 1;
    }
    return 0;
}

int main(int argc, char** argv) {
    return_large_blocks_to_the_os();
    for (int i = 1; i < argc; ++i)
        if (std::string_view(argv[i]) == "--version") {
            std::printf("%s\n", version_line("msmon-tui").c_str());
            return 0;
        }
    if (argc == 3 && std::string_view(argv[1]) == "--docs") return write_docs(argv[2]);
    LaunchOptions o;
    if (auto rc = parse_launch(argc, argv, o)) return *rc;
    init_logging("msmon-tui", false);
    if (!o.store.empty()) {
        if (!o.dir.empty() || o.demo || !o.db.empty())
            return usage_error("--store shows a whole job: no DIR, --db or --demo");
        std::string error;
        if (!parse_clickhouse_url(o.store, error)) return usage_error(error);
        return o.snapshot.empty() ? run_live(o) : run_snapshot(o);
    }
    if (!o.job.empty()) return usage_error("--job goes with --store");
    if (o.demo && !o.dir.empty()) return usage_error("--demo writes its own job: no DIR");
    DemoJob demo;  // stopped and removed when main returns
    if (o.demo) {
        std::string error;
        if (!demo.start(o, error)) return usage_error(error);
    }
    if (o.dir.empty() && o.db.empty()) return usage_error("give the job folder DIR, a store (--db PATH), or --demo");
    if (o.store_only()) {
        // Checked here: opening would fail anyway, but nothing may create an empty store in its place.
        std::error_code ec;
        if (!std::filesystem::is_regular_file(o.db, ec)) {
            std::fprintf(stderr, "msmon-tui: no store at '%s'\n", escape_for_terminal(o.db).c_str());
            return 1;
        }
        return o.snapshot.empty() ? run_live(o) : run_snapshot(o);
    }
    // A folder that does not exist yet is waited for (people start the monitor before the job); anything else
    // that is not a folder is refused.
    std::error_code exists_error;
    if (std::filesystem::exists(o.dir, exists_error) && !std::filesystem::is_directory(o.dir)) {
        std::fprintf(stderr, "msmon-tui: '%s' is not a folder\n", escape_for_terminal(o.dir).c_str());
        return 1;
    }
    if (o.db.empty()) o.db = default_store_path({o.dir});
    return o.snapshot.empty() ? run_live(o) : run_snapshot(o);
}
