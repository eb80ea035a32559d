// msmon anomalies: msprobe's dumps and msmon's detections, in msmon's ranking or msprobe's analyser order.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/json_values.hpp"
#include "cli/store_target.hpp"
#include "core/args/arg_parser.hpp"
#include "core/detect/incidents.hpp"
#include "core/detect/msprobe_rules.hpp"
#include "core/text/counted.hpp"
#include "core/text/display_escape.hpp"
#include "core/text/number_text.hpp"
#include "core/text/rank_ranges.hpp"

namespace msmon {

namespace {

const CommandSpec kAnomaliesSpec{
    "anomalies",
    "(DIR | --db PATH | --store clickhouse://HOST:PORT/DB [--job ID]) [--source msprobe|detected|all] [--incidents] "
    "[--topk K] [--steps LIST] [--rank R] [--format table|json|csv]",
    "Lists anomalies: msprobe's own dumps (anomaly_detected/rank<r>/anomaly.json) and msmon's detections.\n"
    "Anomalies of one event form an incident (a NaN reaching every module and rank, a corrupt batch moving a\n"
    "rank's activations and then every gradient); its origin is where it began: the earliest step, the\n"
    "earliest kind in a training step (activations, their gradients, weight gradients, optimizer state),\n"
    "the first module in forward order. Default order: each incident's origin, most severe incident first,\n"
    "then the rest of each incident. --incidents lists one line per incident. With --source msprobe the\n"
    "order is msprobe's analyser order (step, micro_step, stage, pipeline stage, call id), as\n"
    "anomaly_analyse.json.",
    {
        {"--db", "PATH", "read this store instead of DIR's"},
        trust_db_folder_option(),
        {"--store", "URL", "read the whole job from ClickHouse (clickhouse://HOST:PORT/DB) instead"},
        {"--job", "ID", "with --store: the job (default: the one shipped to most recently)"},
        {"--source", "S", "msprobe, detected or all (default all)"},
        {"--incidents", "", "one line per incident: its origin, how many anomalies and ranks it groups"},
        {"--topk", "K", "only the first K"},
        {"--steps", "LIST", "only these steps: 12,20 or 0-99 (msprobe's \"[12, 20]\" also works)"},
        {"--rank", "R", "only this rank"},
        {"--format", "table|json|csv", "output format (default table; csv and json carry every field)"},
    },
    0,
    1,
};

nlohmann::ordered_json to_json(const AnomalyRecord& a, double rank_score, std::size_t incident, bool origin) {
    nlohmann::ordered_json j;
    j["source"] = a.source;
    j["rule"] = a.rule;
    j["rank"] = a.rank;
    j["step"] = a.step;
    j["micro_step"] = a.micro_step ? nlohmann::ordered_json(*a.micro_step) : nlohmann::ordered_json(nullptr);
    j["kind"] = a.kind;
    j["vpp_stage"] = a.source == "msprobe" ? nlohmann::ordered_json(a.vpp) : vpp_stage_json(a.vpp_stage);
    j["name"] = a.name;
    j["op"] = a.op;
    j["value"] = number_or_text(a.value);
    j["reference"] = a.reference ? number_or_text(*a.reference) : nlohmann::ordered_json(nullptr);
    j["message"] = a.message;
    j["tag_name"] = a.tag_name;
    j["score"] = std::round(rank_score * 100) / 100;
    if (incident) {
        j["incident"] = incident;
        j["origin"] = origin;
    }
    if (a.source == "msprobe") {
        j["key"] = a.key;
        j["call_id"] = a.call_id;
        j["pp_stage"] = a.pp_stage;
        j["group_mates"] = a.group_mates;
    } else if (!a.group_mates.empty()) {
        j["replicas"] = a.group_mates;  // ReplicaDivergence: the ranks that agree; ReplicaTie: the other side
    }
    return j;
}

void print_rows(const nlohmann::ordered_json& rows, const std::string& format) {
    if (format == "csv") std::fputs(json_rows_as_csv(rows, ::isatty(STDOUT_FILENO) == 1).c_str(), stdout);
    else std::printf("%s\n", rows.dump(1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

int print_incidents(const std::vector<AnomalyRecord>& list, const std::vector<Incident>& incidents,
                    std::optional<std::size_t> topk, const std::string& format) {
    const std::size_t n = topk ? std::min(*topk, incidents.size()) : incidents.size();
    if (format != "table") {
        nlohmann::ordered_json out = nlohmann::ordered_json::array();
        for (std::size_t k = 0; k < n; ++k) {
            const Incident& inc = incidents[k];
            const AnomalyRecord& o = list[inc.origin];
            nlohmann::ordered_json j;
            j["incident"] = k + 1;
            j["score"] = std::round(inc.score * 100) / 100;
            j["step"] = o.step;
            j["rank"] = o.rank;
            j["kind"] = o.kind;
            j["name"] = o.name;
            j["op"] = o.op;
            j["rule"] = o.rule;
            j["source"] = o.source;
            j["anomalies"] = inc.members.size();
            j["ranks"] = inc.ranks;
            j["first_step"] = inc.first_step;
            j["last_step"] = inc.last_step;
            j["message"] = o.message;
            out.push_back(std::move(j));
        }
        print_rows(out, format);
        return kExitOk;
    }
    std::printf("%4s %7s %7s %5s  %-15s %-18s %9s %-11s %-11s %s\n", "INC", "SCORE", "STEP", "RANK", "KIND", "RULE",
                "ANOMALIES", "RANKS", "STEPS", "ORIGIN");
    for (std::size_t k = 0; k < n; ++k) {
        const Incident& inc = incidents[k];
        const AnomalyRecord& o = list[inc.origin];
        const std::string steps =
            std::to_string(inc.first_step) +
            (inc.last_step > inc.first_step ? "-" + std::to_string(inc.last_step) : std::string());
        std::printf("%4zu %7.1f %7lld %5d  %-15s %-18s %9zu %-11s %-11s %s\n", k + 1, inc.score,
                    static_cast<long long>(o.step), o.rank, escape_for_display(o.kind, 40).c_str(),
                    escape_for_display(o.rule, 40).c_str(), inc.members.size(), rank_ranges(inc.ranks).c_str(),
                    steps.c_str(), escape_for_display(o.name, 200).c_str());
    }
    std::printf("%zu of %s (%s)\n", n, counted(incidents.size(), "incident").c_str(),
                counted(list.size(), "anomaly", "anomalies").c_str());
    return kExitOk;
}

}  // namespace

int run_anomalies_command(int argc, char** argv) {
    bool help = false;
    std::string error;
    auto args = parse_args(kAnomaliesSpec, argc, argv, 2, help, error);
    if (help) {
        std::fputs(render_help(kAnomaliesSpec).c_str(), stdout);
        return kExitOk;
    }
    auto usage_error = [](const std::string& msg) {
        std::fprintf(stderr, "msmon anomalies: %s\n", escape_for_terminal(msg).c_str());
        return kExitUsage;
    };
    if (!args) return usage_error(error);
    AnomalyFilter filter;
    const std::string source = args->value("--source").value_or("all");
    if (source != "msprobe" && source != "detected" && source != "all")
        return usage_error("--source is msprobe, detected or all");
    if (source != "all") filter.source = source;
    if (auto r = args->value("--rank")) {
        const auto v = parse_rank(*r);
        if (!v) return usage_error(rank_refusal("--rank", *r));
        filter.rank = *v;
    }
    if (auto s = args->value("--steps")) {
        filter.steps = StepList::parse(*s, error);
        if (!filter.steps) return usage_error("--steps: " + error);
    }
    std::optional<std::size_t> topk;
    if (auto k = args->value("--topk")) {
        auto v = parse_int(*k);
        if (!v || *v <= 0) return usage_error("--topk takes a number > 0");
        topk = static_cast<std::size_t>(*v);
    }
    const std::string format = args->value("--format").value_or("table");
    if (format != "table" && format != "json" && format != "csv") return usage_error("--format is table, json or csv");

    bool usage = false;
    auto reader = open_target_reader(*args, error, usage);
    if (!reader) {
        if (usage) return usage_error(error);
        std::fprintf(stderr, "msmon anomalies: %s\n", escape_for_terminal(error).c_str());
        return kExitFailure;
    }
    std::vector<AnomalyRecord> list;
    try {
        list = reader->anomalies(filter);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "msmon anomalies: %s\n", escape_for_terminal(e.what()).c_str());
        return kExitFailure;
    }
    std::vector<std::size_t> order(list.size());
    std::vector<std::size_t> incident_of(list.size(), 0);  // 1-based incident number; 0: msprobe's order
    std::vector<bool> is_origin(list.size(), false);
    std::vector<double> ranked(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) ranked[i] = list[i].score;
    const auto incidents = source == "msprobe" ? std::vector<Incident>{} : group_incidents(list);
    if (source == "msprobe") {
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
            const auto& a = list[x];
            const auto& b = list[y];
            return msprobe_analyser_less({a.step, a.micro_step.value_or(0), a.tag_name, a.vpp, a.pp_stage, a.call_id},
                                         {b.step, b.micro_step.value_or(0), b.tag_name, b.vpp, b.pp_stage, b.call_id});
        });
    } else {
        order.clear();
        for (std::size_t n = 0; n < incidents.size(); ++n) {
            order.push_back(incidents[n].origin);
            is_origin[incidents[n].origin] = true;
            for (auto m : incidents[n].members) incident_of[m] = n + 1;
        }
        for (const auto& inc : incidents)
            for (std::size_t k = 1; k < inc.members.size(); ++k) order.push_back(inc.members[k]);
    }
    if (args->has("--incidents")) {
        if (source == "msprobe")
            return usage_error("--incidents groups msmon's ranking; --source msprobe lists msprobe's order");
        return print_incidents(list, incidents, topk, format);
    }
    if (topk && order.size() > *topk) order.resize(*topk);

    if (format != "table") {
        nlohmann::ordered_json out = nlohmann::ordered_json::array();
        for (auto i : order) out.push_back(to_json(list[i], ranked[i], incident_of[i], is_origin[i]));
        print_rows(out, format);
        return kExitOk;
    }
    std::printf("%5s %7s %7s %5s  %-18s %-15s %-8s %-14s %-14s %-8s %s\n", "INC", "SCORE", "STEP", "RANK", "RULE",
                "KIND", "OP", "VALUE", "REFERENCE", "SOURCE", "NAME");
    for (auto i : order) {
        const auto& a = list[i];
        const std::string inc = incident_of[i] ? std::to_string(incident_of[i]) + (is_origin[i] ? "*" : "") : "-";
        std::printf(
            "%5s %7.1f %7lld %5d  %-18s %-15s %-8s %-14s %-14s %-8s %s\n", inc.c_str(), ranked[i],
            static_cast<long long>(a.step), a.rank, escape_for_display(a.rule, 40).c_str(),
            escape_for_display(a.kind, 40).c_str(), escape_for_display(a.op, 20).c_str(),
            format_double_within(a.value, 14).c_str(),
            a.reference ? format_double_within(*a.reference, 14).c_str() : "-", a.source.c_str(),
            escape_for_display(
                a.name + (a.micro_step && a.source == "detected" ? ":" + std::to_string(*a.micro_step) : ""), 200)
                .c_str());
    }
    std::printf("%zu of %s", order.size(), counted(list.size(), "anomaly", "anomalies").c_str());
    if (!incidents.empty())
        std::printf(" in %s (* marks where %s)", counted(incidents.size(), "incident").c_str(),
                    incidents.size() == 1 ? "it began" : "each began");
    std::printf("\n");
    return kExitOk;
}

const CommandSpec& anomalies_command_spec() {
    return kAnomaliesSpec;
}

}  // namespace msmon
