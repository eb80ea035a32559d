// msmon anomalies: msprobe's dumps and msmon's detections, in msmon's ranking or msprobe's analyser order.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/arg_parser.hpp"
#include "cli/commands.hpp"
#include "cli/store_target.hpp"
#include "core/detect/msprobe_rules.hpp"
#include "core/text/display_escape.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

const CommandSpec kAnomaliesSpec{
    "anomalies",
    "(DIR | --db PATH | --store clickhouse://HOST:PORT/DB [--job ID]) [--source msprobe|detected|all] [--topk K] [--steps LIST] [--rank R] [--format table|json]",
    "Lists anomalies: msprobe's own dumps (anomaly_detected/rank<r>/anomaly.json) and msmon's detections.\n"
    "Default order is msmon's ranking (NaN appearing in a finite series, rank outliers, stalls and big norm\n"
    "jumps first; steps where many series fire together count more). With --source msprobe the order is\n"
    "msprobe's analyser order (step, micro_step, stage, pipeline stage, call id), as anomaly_analyse.json.",
    {
        {"--db", "PATH", "read this store instead of DIR's"},
        {"--store", "URL", "read the whole job from ClickHouse (clickhouse://HOST:PORT/DB) instead"},
        {"--job", "ID", "with --store: the job (default: the one shipped to most recently)"},
        {"--source", "S", "msprobe, detected or all (default all)"},
        {"--topk", "K", "only the first K"},
        {"--steps", "LIST", "only these steps: 12,20 or 0-99 (msprobe's \"[12, 20]\" also works)"},
        {"--rank", "R", "only this rank"},
        {"--format", "table|json", "output format (default table)"},
    },
    0,
    1,
};

nlohmann::ordered_json number_or_text(double v) {
    if (std::isfinite(v)) return v;
    return format_double(v);
}

nlohmann::ordered_json to_json(const AnomalyRecord& a, double rank_score) {
    nlohmann::ordered_json j;
    j["source"] = a.source;
    j["rule"] = a.rule;
    j["rank"] = a.rank;
    j["step"] = a.step;
    j["micro_step"] = a.micro_step ? nlohmann::ordered_json(*a.micro_step) : nlohmann::ordered_json(nullptr);
    j["kind"] = a.kind;
    j["name"] = a.name;
    j["op"] = a.op;
    j["value"] = number_or_text(a.value);
    j["reference"] = a.reference ? number_or_text(*a.reference) : nlohmann::ordered_json(nullptr);
    j["message"] = a.message;
    j["tag_name"] = a.tag_name;
    j["score"] = std::round(rank_score * 100) / 100;
    if (a.source == "msprobe") {
        j["key"] = a.key;
        j["call_id"] = a.call_id;
        j["pp_stage"] = a.pp_stage;
        j["vpp_stage"] = a.vpp;
        j["group_mates"] = a.group_mates;
    }
    return j;
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
        std::fprintf(stderr, "msmon anomalies: %s\n", msg.c_str());
        return kExitUsage;
    };
    if (!args) return usage_error(error);
    AnomalyFilter filter;
    const std::string source = args->value("--source").value_or("all");
    if (source != "msprobe" && source != "detected" && source != "all") return usage_error("--source is msprobe, detected or all");
    if (source != "all") filter.source = source;
    if (auto r = args->value("--rank")) {
        auto v = parse_int(*r);
        if (!v || *v < 0) return usage_error("--rank takes a rank number");
        filter.rank = static_cast<int>(*v);
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
    if (format != "table" && format != "json") return usage_error("--format is table or json");

    bool usage = false;
    auto reader = open_target_reader(*args, error, usage);
    if (!reader) {
        if (usage) return usage_error(error);
        std::fprintf(stderr, "msmon anomalies: %s\n", error.c_str());
        return kExitFailure;
    }
    std::vector<AnomalyRecord> list;
    try {
        list = reader->anomalies(filter);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "msmon anomalies: %s\n", e.what());
        return kExitFailure;
    }
    // Breadth: how many anomalies share a (rank, step) — a loss spike fires on every tensor at once.
    std::map<std::pair<int, std::int64_t>, int> breadth;
    for (const auto& a : list) ++breadth[{a.rank, a.step}];
    std::vector<double> ranked(list.size());
    for (std::size_t i = 0; i < list.size(); ++i)
        ranked[i] = list[i].score > 0 ? list[i].score + 5.0 * std::log10(breadth[{list[i].rank, list[i].step}]) : 0;
    std::vector<std::size_t> order(list.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    if (source == "msprobe") {
        std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
            const auto& a = list[x];
            const auto& b = list[y];
            return msprobe_analyser_less({a.step, a.micro_step.value_or(0), a.tag_name, a.vpp, a.pp_stage, a.call_id},
                                         {b.step, b.micro_step.value_or(0), b.tag_name, b.vpp, b.pp_stage, b.call_id});
        });
    } else {
        std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
            if (ranked[x] != ranked[y]) return ranked[x] > ranked[y];
            return list[x].step != list[y].step ? list[x].step < list[y].step : list[x].rank < list[y].rank;
        });
    }
    if (topk && order.size() > *topk) order.resize(*topk);

    if (format == "json") {
        nlohmann::ordered_json out = nlohmann::ordered_json::array();
        for (auto i : order) out.push_back(to_json(list[i], ranked[i]));
        std::printf("%s\n", out.dump(1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        return kExitOk;
    }
    std::printf("%7s %7s %5s  %-18s %-15s %-8s %-14s %-14s %-8s %s\n", "SCORE", "STEP", "RANK", "RULE", "KIND", "OP",
                "VALUE", "REFERENCE", "SOURCE", "NAME");
    for (auto i : order) {
        const auto& a = list[i];
        std::printf("%7.1f %7lld %5d  %-18s %-15s %-8s %-14s %-14s %-8s %s\n", ranked[i], static_cast<long long>(a.step),
                    a.rank, escape_for_display(a.rule, 40).c_str(), escape_for_display(a.kind, 40).c_str(),
                    escape_for_display(a.op, 20).c_str(), format_double(a.value).c_str(),
                    a.reference ? format_double(*a.reference).c_str() : "-", a.source.c_str(),
                    escape_for_display(a.name + (a.micro_step && a.source == "detected" ? ":" + std::to_string(*a.micro_step) : ""), 200).c_str());
    }
    std::printf("%zu of %zu anomalies\n", order.size(), list.size());
    return kExitOk;
}

}  // namespace msmon
