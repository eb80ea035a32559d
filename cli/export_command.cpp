// msmon export: the store as msprobe's trend-visualisation database, monitor_data.trend.db (data2db's).
#include <chrono>
#include <cstdio>

#include "cli/commands.hpp"
#include "cli/store_target.hpp"
#include "core/args/arg_parser.hpp"
#include "core/text/display_escape.hpp"
#include "store/store_location.hpp"
#include "store/trend_db_export.hpp"

namespace msmon {

namespace {

const CommandSpec kExportSpec{
    "export",
    "(DIR | --db PATH) --trend-db OUTDIR [--micro-step true|false]",
    "Writes OUTDIR/monitor_data.trend.db with the tables and rows msprobe's `data2db` writes\n"
    "(msprobe's trend visualisation reads it). With DIR, files not yet read are ingested first.\n"
    "As data2db does: one run folder per rank (of several, the latest); the kinds actv, actv_grad,\n"
    "exp_avg, exp_avg_sq, grad_unreduced, grad_reduced, param_origin, param_updated and other;\n"
    "nan is stored as NULL, inf and -inf as 1e9+1 and -1e9-1, other values clamped to [-1e9, 1e9];\n"
    "rows whose vpp_stage is not an integer are left out.\n"
    "An existing OUTDIR/monitor_data.trend.db is replaced, as data2db replaces it. The new file is\n"
    "written beside it and renamed over it only when complete: a failed export leaves the old one\n"
    "as it was. OUTDIR is created if missing.",
    {
        {"--db", "PATH", "read this store instead of DIR's"},
        trust_db_folder_option(),
        {"--trend-db", "OUTDIR", "folder to write monitor_data.trend.db into (required)"},
        {"--micro-step", "true|false",
         "data2db's --micro_step: true (default) numbers steps by global micro-batch\n"
         "                          and sets micro_step 0; false keeps both as written"},
    },
    0,
    1,
};

}  // namespace

int run_export_command(int argc, char** argv) {
    bool help = false;
    std::string error;
    auto args = parse_args(kExportSpec, argc, argv, 2, help, error);
    if (help) {
        std::fputs(render_help(kExportSpec).c_str(), stdout);
        return kExitOk;
    }
    auto usage_error = [](const std::string& msg) {
        std::fprintf(stderr, "msmon export: %s\n", escape_for_terminal(msg).c_str());
        return kExitUsage;
    };
    if (!args) return usage_error(error);
    const auto out_dir = args->value("--trend-db");
    if (!out_dir || out_dir->empty()) return usage_error("--trend-db OUTDIR is required");
    TrendDbOptions options;
    const std::string micro = args->value("--micro-step").value_or("true");
    if (micro != "true" && micro != "false") return usage_error("--micro-step is true or false");
    options.micro_step = micro == "true";

    // Same target resolution as the other read commands (DIR is ingested first); the export reads the store
    // file itself, in one snapshot.
    bool usage = false;
    if (!open_target_reader(*args, error, usage)) {
        if (usage) return usage_error(error);
        std::fprintf(stderr, "msmon export: %s\n", escape_for_terminal(error).c_str());
        return kExitFailure;
    }
    const auto db = args->value("--db");
    const auto store = resolve_store_path(db ? *db : default_store_path({args->positional.front()}),
                                          StoreAccess{args->has(kTrustDbFolderOption)}, false, error);
    if (!store) {
        std::fprintf(stderr, "msmon export: %s\n", escape_for_terminal(error).c_str());
        return kExitFailure;
    }

    const auto start = std::chrono::steady_clock::now();
    TrendDbSummary summary;
    try {
        summary = export_trend_db(*store, *out_dir, options);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "msmon export: %s\n", escape_for_terminal(e.what()).c_str());
        return kExitFailure;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (summary.older_runs > 0)
        std::fprintf(stderr, "msmon export: %lld older run folder(s) left out: data2db takes one folder per rank\n",
                     static_cast<long long>(summary.older_runs));
    if (summary.skipped_rows > 0)
        std::fprintf(stderr, "msmon export: %lld row(s) left out: vpp_stage is not an integer (as data2db)\n",
                     static_cast<long long>(summary.skipped_rows));
    std::printf(
        "wrote %s: %lld rows, %lld targets, %lld metrics, %lld tags, %lld rank(s), "
        "steps %lld-%lld (%.3f s)\n",
        summary.path.c_str(), static_cast<long long>(summary.rows), static_cast<long long>(summary.targets),
        static_cast<long long>(summary.metrics), static_cast<long long>(summary.tags),
        static_cast<long long>(summary.ranks), static_cast<long long>(summary.min_step),
        static_cast<long long>(summary.max_step), seconds);
    return kExitOk;
}

const CommandSpec& export_command_spec() {
    return kExportSpec;
}

}  // namespace msmon
