// msmon health: checkpoints and their health flags, the latest healthy one, data skips, spikes and stops.
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "cli/commands.hpp"
#include "cli/store_target.hpp"
#include "core/args/arg_parser.hpp"
#include "core/text/counted.hpp"
#include "core/text/display_escape.hpp"
#include "core/text/number_text.hpp"
#include "core/text/rank_ranges.hpp"
#include "store/check_coverage.hpp"

namespace msmon {

namespace {

const CommandSpec kHealthSpec{
    "health",
    "(DIR | --db PATH | --store clickhouse://HOST:PORT/DB [--job ID]) [--format table|json] [--run-config [--rank R]]",
    "Checkpoint health from MindFormers' health_ckpts.json (is_health 0 = healthy), the latest healthy\n"
    "checkpoint to resume from, and the job's events: data skips, global-norm spikes, stops and errors.\n"
    "With --run-config, the run's config instead: the text summaries the job wrote to TensorBoard (MindFormers\n"
    "writes every config key on the TEXT page), per rank; ranks with the same config are listed once.",
    {
        {"--db", "PATH", "read this store instead of DIR's"},
        trust_db_folder_option(),
        {"--store", "URL", "read the whole job from ClickHouse (clickhouse://HOST:PORT/DB) instead"},
        {"--job", "ID", "with --store: the job (default: the one shipped to most recently)"},
        {"--format", "table|json", "output format (default table)"},
        {"--run-config", "", "print the run's config from the text summaries (key: text per line)"},
        {"--rank", "R", "with --run-config: this rank only"},
    },
    0,
    1,
};

// Ranks whose runs wrote the same entries are one block: "ranks 0-7".
int print_run_config(Reader& reader, std::optional<int> rank, bool json) {
    std::vector<RunConfigEntry> entries;
    try {
        entries = reader.run_config(rank);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "msmon health: %s\n", escape_for_terminal(e.what()).c_str());
        return kExitFailure;
    }
    if (json) {
        nlohmann::ordered_json j = nlohmann::ordered_json::array();
        for (const auto& e : entries)
            j.push_back({{"rank", e.rank},
                         {"source", e.source},
                         {"step", e.step ? nlohmann::ordered_json(*e.step) : nlohmann::ordered_json(nullptr)},
                         {"key", e.key},
                         {"text", e.text}});
        std::printf("%s\n", j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        return kExitOk;
    }
    struct Block {
        std::vector<int> ranks;
        std::size_t first = 0, end = 0;  // the first rank's entries
    };
    std::vector<Block> blocks;
    std::map<std::vector<std::pair<std::string, std::string>>, std::size_t> block_of;
    for (std::size_t i = 0; i < entries.size();) {
        std::size_t end = i;
        while (end < entries.size() && entries[end].rank == entries[i].rank) ++end;
        std::vector<std::pair<std::string, std::string>> key;
        for (std::size_t k = i; k < end; ++k) key.emplace_back(entries[k].key, entries[k].text);
        auto [it, fresh] = block_of.try_emplace(std::move(key), blocks.size());
        if (fresh) blocks.push_back({{}, i, end});
        blocks[it->second].ranks.push_back(entries[i].rank);
        i = end;
    }
    if (blocks.empty()) {
        std::printf("run config: no text summaries%s (the config is read from TensorBoard event files)\n",
                    rank ? (" for rank " + std::to_string(*rank)).c_str() : "");
        return kExitOk;
    }
    for (const auto& b : blocks) {
        std::string who;
        for (std::size_t i = 0; i < b.ranks.size();) {
            std::size_t j = i;
            while (j + 1 < b.ranks.size() && b.ranks[j + 1] == b.ranks[j] + 1) ++j;
            who +=
                (who.empty() ? "" : ",") + std::to_string(b.ranks[i]) + (j > i ? "-" + std::to_string(b.ranks[j]) : "");
            i = j + 1;
        }
        std::printf("run config of rank%s %s (%s):\n", b.ranks.size() > 1 ? "s" : "", who.c_str(),
                    escape_for_display(entries[b.first].source, 300).c_str());
        for (std::size_t k = b.first; k < b.end; ++k) {
            const auto& e = entries[k];
            // Each line of a multi-line text on its own line, indented; every byte escaped for the terminal.
            std::string_view rest = e.text;
            while (!rest.empty() && rest.back() == '\n') rest.remove_suffix(1);  // a YAML dump's last newline
            const bool multi = rest.find('\n') != std::string_view::npos;
            std::printf("  %s:%s", escape_for_display(e.key, 300).c_str(), multi ? "\n" : " ");
            while (true) {
                const auto nl = rest.find('\n');
                std::printf("%s%s\n", multi ? "    " : "", escape_for_display(rest.substr(0, nl), 4000).c_str());
                if (nl == std::string_view::npos) break;
                rest = rest.substr(nl + 1);
            }
        }
    }
    return kExitOk;
}

// The thresholds MindFormers' checks were judged with, where the job has MindFormers' series (else none: a
// msprobe-only job has no global norm to judge).
std::vector<ThresholdUse> mindformers_thresholds(Reader& reader) {
    for (const auto& [kind, ops] : reader.catalog().kinds)
        if (kind == "global_norm" || kind == "embedding_local_norm") return reader.thresholds_used();
    return {};
}

// What the checks across ranks can see: the replica groups learned, and each check that can't run.
void print_checks(const CheckCoverage& c) {
    if (c.replicas.empty() && c.cannot_run.empty()) return;
    std::printf("checks across ranks:\n");
    if (const std::string s = c.summary(); !s.empty()) {
        std::string kinds;
        for (const auto& k : c.replicas)
            if (k.grouped) kinds += (kinds.empty() ? "" : ", ") + k.kind;
        std::printf("  replica groups: %s (%s; steps %lld-%lld)\n", s.c_str(), kinds.c_str(),
                    static_cast<long long>(c.steps.front()), static_cast<long long>(c.steps.back()));
    }
    for (const auto& line : c.cannot_run) std::printf("  %s\n", line.c_str());
}

// Over the whole job: which node holds which replicas, and where each check runs.
void print_placement(const JobPlacement& p, const CheckCoverage& c) {
    std::map<int, std::string> node_of(p.rank_nodes.begin(), p.rank_nodes.end());
    std::set<std::string> nodes;
    for (const auto& [_, node] : p.rank_nodes) nodes.insert(node);
    std::printf("where the checks run (%s on %s):\n", counted(p.rank_nodes.size(), "rank").c_str(),
                counted(nodes.size(), "node").c_str());
    std::printf(
        "  each node's agent, over its own ranks: non-finite values and jumps in every series, a weight "
        "altered between steps, dead layers, msprobe's alert rules\n");
    if (p.judged_steps > 0)
        std::printf(
            "  the job-level judge (msmon judge), over every rank: replicas, cross-rank outliers, the "
            "optimizer's step, stalled ranks; judged through step %lld (%lld steps; last by %s at %s)\n",
            static_cast<long long>(p.judged_through), static_cast<long long>(p.judged_steps),
            escape_for_display(p.last_judge, 100).c_str(), escape_for_display(p.last_judged, 40).c_str());
    else
        std::printf(
            "  no job-level judge has judged this job: replicas, cross-rank outliers, the optimizer's step and "
            "stalls are judged by each agent over its own node's ranks only (start msmon judge --store URL "
            "--job ID; docs/cluster.md)\n");
    if (c.example_groups.empty()) return;
    std::size_t spanning = 0;
    bool two_on_a_node = false;  // some node holds two replicas of a group: its agent compares those
    for (const auto& g : c.example_groups) {
        std::set<std::string> on;
        for (int r : g) on.insert(node_of.count(r) ? node_of[r] : "?");
        spanning += on.size() > 1;
        two_on_a_node |= on.size() < g.size();
    }
    std::printf("  replica groups across nodes (as %s has them): %zu group%s, %zu of them across nodes%s\n",
                escape_for_display(c.example_tensor, 200).c_str(), c.example_groups.size(),
                c.example_groups.size() == 1 ? "" : "s", spanning,
                !spanning            ? ""
                : !two_on_a_node     ? "; no node holds two replicas of one: only the judge compares them"
                : p.judged_steps > 0 ? ""
                                     : ": no agent sees all of their replicas");
    std::size_t shown = 0;
    for (const auto& g : c.example_groups) {
        if (++shown > 8) {
            std::printf("    ... and %zu more\n", c.example_groups.size() - 8);
            break;
        }
        std::set<std::string> on;
        for (int r : g) on.insert(node_of.count(r) ? node_of[r] : "?");
        std::string list;
        for (const auto& n : on) list += (list.empty() ? "" : ",") + n;
        std::printf("    ranks %s on %s\n", rank_ranges(g).c_str(), escape_for_display(list, 300).c_str());
    }
}

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
        std::fprintf(stderr, "msmon health: %s\n", escape_for_terminal(error).c_str());
        return kExitUsage;
    }
    const std::string format = args->value("--format").value_or("table");
    if (format != "table" && format != "json") {
        std::fprintf(stderr, "msmon health: --format is table or json\n");
        return kExitUsage;
    }
    std::optional<int> rank;
    if (auto v = args->value("--rank")) {
        rank = parse_rank(*v);
        if (!rank || !args->has("--run-config")) {
            std::fprintf(
                stderr, "msmon health: %s\n",
                escape_for_terminal(!rank ? rank_refusal("--rank", *v) : "--rank goes with --run-config").c_str());
            return kExitUsage;
        }
    }
    bool usage = false;
    auto reader = open_target_reader(*args, error, usage);
    if (!reader) {
        std::fprintf(stderr, "msmon health: %s\n", escape_for_terminal(error).c_str());
        return usage ? kExitUsage : kExitFailure;
    }
    if (args->has("--run-config")) return print_run_config(*reader, rank, format == "json");
    std::vector<CheckpointRecord> checkpoints;
    std::vector<EventRecord> events;
    std::vector<Restart> restarts;
    CheckCoverage coverage;
    std::optional<JobPlacement> placement;
    std::vector<ThresholdUse> thresholds;
    try {
        thresholds = mindformers_thresholds(*reader);
        coverage = check_coverage(*reader);
        placement = reader->job_placement();
        checkpoints = reader->checkpoints();
        events = reader->events();
        restarts = job_restarts(reader->run_segments(), events);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "msmon health: %s\n", escape_for_terminal(e.what()).c_str());
        return kExitFailure;
    }
    const CheckpointRecord* latest = nullptr;
    for (const auto& c : checkpoints)
        if (c.healthy &&
            (!latest || c.step > latest->step || (c.step == latest->step && c.position > latest->position)))
            latest = &c;

    if (format == "json") {
        nlohmann::ordered_json j;
        j["checkpoints"] = nlohmann::ordered_json::array();
        for (const auto& c : checkpoints)
            j["checkpoints"].push_back(
                {{"name", c.name}, {"rank", c.rank}, {"epoch", c.epoch}, {"step", c.step}, {"healthy", c.healthy}});
        j["latest_healthy"] = latest ? nlohmann::ordered_json(latest->name) : nlohmann::ordered_json(nullptr);
        j["restarts"] = nlohmann::ordered_json::array();
        for (const Restart& r : restarts) {
            nlohmann::ordered_json o{{"source", r.from_log ? "log" : "runs"},
                                     {"time_label", r.time_label},
                                     {"ranks", r.ranks},
                                     {"reached", r.reached}};
            o["resumed_at"] = r.from_log ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.resumed_at);
            const auto c = r.from_log ? std::nullopt : resumed_checkpoint(r, checkpoints);
            o["checkpoint"] = c ? nlohmann::ordered_json(checkpoints[*c].name) : nlohmann::ordered_json(nullptr);
            j["restarts"].push_back(std::move(o));
        }
        nlohmann::ordered_json checks;
        checks["replica_groups"] = coverage.summary();
        checks["learned_from_steps"] = coverage.steps;
        checks["replicas"] = nlohmann::ordered_json::array();
        for (const auto& k : coverage.replicas)
            checks["replicas"].push_back(
                {{"kind", k.kind}, {"tensors", k.tensors}, {"grouped", k.grouped}, {"group_size", k.group_size}});
        checks["cannot_run"] = coverage.cannot_run;
        if (placement) {
            nlohmann::ordered_json job;
            nlohmann::ordered_json nodes = nlohmann::ordered_json::object();
            for (const auto& [rank, node] : placement->rank_nodes) nodes[std::to_string(rank)] = node;
            job["rank_nodes"] = std::move(nodes);
            job["judged_steps"] = placement->judged_steps;
            job["judged_through"] =
                placement->judged_steps ? nlohmann::ordered_json(placement->judged_through) : nlohmann::ordered_json();
            job["last_judge"] = placement->last_judge;
            job["replica_groups"] = coverage.example_groups;
            job["replica_groups_of"] = coverage.example_tensor;
            checks["job"] = std::move(job);
        }
        j["checks"] = std::move(checks);
        j["thresholds"] = nlohmann::ordered_json::array();
        for (const auto& t : thresholds)
            j["thresholds"].push_back({{"name", t.key},
                                       {"value", t.value ? nlohmann::ordered_json(*t.value) : nlohmann::ordered_json()},
                                       {"source", t.source}});
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
    if (!restarts.empty()) {
        std::printf("restarts (%zu):\n", restarts.size());
        for (const Restart& r : restarts)
            std::printf("  %s\n", escape_for_display(describe_restart(r, checkpoints), 600).c_str());
    }
    if (!thresholds.empty()) {
        std::printf("thresholds of MindFormers' checks:\n");
        for (const auto& t : thresholds)
            std::printf("  %-34s %-8s %s\n", t.key.c_str(), t.value ? format_short(*t.value).c_str() : "none",
                        escape_for_display(t.source, 400).c_str());
    }
    print_checks(coverage);
    if (placement) print_placement(*placement, coverage);
    std::size_t config_entries = 0;
    for (const auto& e : events) config_entries += e.kind == "config";
    if (config_entries)
        std::printf("run config: %s from text summaries (msmon health --run-config prints them)\n",
                    counted(config_entries, "key").c_str());
    std::printf("events (%zu):\n", events.size() - config_entries);
    for (const auto& e : events) {
        if (e.kind == "config") continue;
        std::string msg = e.message;
        if (const auto nl = msg.rfind('\n'); nl != std::string::npos)
            msg = msg.substr(nl + 1);  // a traceback's last line
        std::printf("  step %-7s rank %-4d %-18s %s\n", e.step ? std::to_string(*e.step).c_str() : "-", e.rank,
                    e.kind.c_str(), escape_for_display(msg, 300).c_str());
    }
    return kExitOk;
}

const CommandSpec& health_command_spec() {
    return kHealthSpec;
}

}  // namespace msmon
