// msmon health: checkpoints and their health flags, the latest healthy one, data skips, spikes and stops.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/arg_parser.hpp"
#include "cli/commands.hpp"
#include "cli/store_target.hpp"
#include "core/text/display_escape.hpp"

namespace msmon {

namespace {

const CommandSpec kHealthSpec{
    "health",
    "(DIR | --db PATH | --store clickhouse://HOST:PORT/DB [--job ID]) [--format table|json]",
    "Checkpoint health from MindFormers' health_ckpts.json (is_health 0 = healthy), the latest healthy\n"
    "checkpoint to resume from, and the job's events: data skips, global-norm spikes, stops and errors.",
    {
        {"--db", "PATH", "read this store instead of DIR's"},
        {"--store", "URL", "read the whole job from ClickHouse (clickhouse://HOST:PORT/DB) instead"},
        {"--job", "ID", "with --store: the job (default: the one shipped to most recently)"},
        {"--format", "table|json", "output format (default table)"},
    },
    0,
    1,
};

}  // namespace

int run_health_command(int argc, char** argv) {
    bool help = false;
    std::string error;
    auto args = parse_args(kHealthSpec, argc, argv, 2, help, error);
    if (help) {
        std::fputs(render_help(kHealthSpec).c_str(), stdout);
        return kExitOk;
    }
    if (!args) {
        std::fprintf(stderr, "msmon health: %s\n", error.c_str());
        return kExitUsage;
    }
    const std::string format = args->value("--format").value_or("table");
    if (format != "table" && format != "json") {
        std::fprintf(stderr, "msmon health: --format is table or json\n");
        return kExitUsage;
    }
    bool usage = false;
    auto reader = open_target_reader(*args, error, usage);
    if (!reader) {
        std::fprintf(stderr, "msmon health: %s\n", error.c_str());
        return usage ? kExitUsage : kExitFailure;
    }
    std::vector<CheckpointRecord> checkpoints;
    std::vector<EventRecord> events;
    try {
        checkpoints = reader->checkpoints();
        events = reader->events();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "msmon health: %s\n", e.what());
        return kExitFailure;
    }
    const CheckpointRecord* latest = nullptr;
    for (const auto& c : checkpoints)
        if (c.healthy && (!latest || c.step > latest->step || (c.step == latest->step && c.position > latest->position)))
            latest = &c;

    if (format == "json") {
        nlohmann::ordered_json j;
        j["checkpoints"] = nlohmann::ordered_json::array();
        for (const auto& c : checkpoints)
            j["checkpoints"].push_back(
                {{"name", c.name}, {"rank", c.rank}, {"epoch", c.epoch}, {"step", c.step}, {"healthy", c.healthy}});
        j["latest_healthy"] = latest ? nlohmann::ordered_json(latest->name) : nlohmann::ordered_json(nullptr);
        j["events"] = nlohmann::ordered_json::array();
        for (const auto& e : events)
            j["events"].push_back({{"rank", e.rank},
                                   {"step", e.step ? nlohmann::ordered_json(*e.step) : nlohmann::ordered_json(nullptr)},
                                   {"kind", e.kind},
                                   {"time", e.time},
                                   {"message", e.message}});
        std::printf("%s\n", j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        return kExitOk;
    }
    std::printf("checkpoints (%zu):\n", checkpoints.size());
    for (const auto& c : checkpoints)
        std::printf("  %-9s step %-7lld rank %-4d %s%s\n", c.healthy ? "healthy" : "UNHEALTHY",
                    static_cast<long long>(c.step), c.rank, escape_for_display(c.name, 300).c_str(),
                    &c == latest ? "   <- latest healthy: resume from here" : "");
    std::printf("latest healthy: %s\n", latest ? escape_for_display(latest->name, 300).c_str() : "none");
    std::printf("events (%zu):\n", events.size());
    for (const auto& e : events) {
        std::string msg = e.message;
        if (const auto nl = msg.rfind('\n'); nl != std::string::npos) msg = msg.substr(nl + 1);  // a traceback's last line
        std::printf("  step %-7s rank %-4d %-18s %s\n", e.step ? std::to_string(*e.step).c_str() : "-", e.rank,
                    e.kind.c_str(), escape_for_display(msg, 300).c_str());
    }
    return kExitOk;
}

}  // namespace msmon
