// msmon query: one value per line, rank,kind,vpp_stage,name,step,micro_step,op,value (CSV or JSON).
#include <cmath>
#include <cstdio>
#include <regex>
#include <nlohmann/json.hpp>

#include "cli/arg_parser.hpp"
#include "cli/commands.hpp"
#include "cli/store_target.hpp"
#include "core/text/csv_record.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

const CommandSpec kQuerySpec{
    "query",
    "(DIR | --db PATH | --store clickhouse://HOST:PORT/DB [--job ID]) [--rank R] [--kind K] [--name REGEX] [--op OP] [--steps LIST] [--format csv|json]",
    "Prints stored values, one per line: rank,kind,vpp_stage,name,step,micro_step,op,value.\n"
    "Values are the shortest text that reads back as the same double; nan, inf, -inf as such.\n"
    "With DIR, files not yet read are ingested first.",
    {
        {"--db", "PATH", "read this store instead of DIR's"},
        {"--store", "URL", "read the whole job from ClickHouse (clickhouse://HOST:PORT/DB) instead"},
        {"--job", "ID", "with --store: the job (default: the one shipped to most recently)"},
        {"--rank", "R", "only this rank"},
        {"--kind", "K", "only this kind (grad_reduced, actv, exp_avg, ...)"},
        {"--name", "REGEX", "only names matching REGEX (searched anywhere in the name)"},
        {"--op", "OP", "only this op (norm, min, max, mean, nans, zeros, shape, dtype, ...)"},
        {"--steps", "LIST", "only these steps: 12,20 or 0-99 or 5,10-20"},
        {"--format", "csv|json", "output format (default csv)"},
    },
    0,
    1,
};

class PointWriter {
public:
    explicit PointWriter(bool json) : json_(json) {
        if (json_) out_ = "[";
        else out_ = "rank,kind,vpp_stage,name,step,micro_step,op,value\n";
    }
    void add(const Point& p) {
        if (json_) {
            nlohmann::ordered_json j;
            j["rank"] = p.rank;
            j["kind"] = p.kind;
            j["vpp_stage"] = p.vpp_stage;
            j["name"] = p.name;
            j["step"] = p.step;
            j["micro_step"] = p.micro_step ? nlohmann::ordered_json(*p.micro_step) : nlohmann::ordered_json(nullptr);
            j["op"] = p.op;
            if (p.is_text) j["value"] = p.text;
            else if (std::isfinite(p.value)) j["value"] = p.value;
            else j["value"] = format_double(p.value);  // JSON has no NaN/Infinity: "nan", "inf", "-inf"
            out_ += first_ ? "\n" : ",\n";
            out_ += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        } else {
            out_ += std::to_string(p.rank);
            out_ += ',';
            append_csv_field(out_, p.kind);
            out_ += ',';
            append_csv_field(out_, p.vpp_stage);
            out_ += ',';
            append_csv_field(out_, p.name);
            out_ += ',';
            out_ += std::to_string(p.step);
            out_ += ',';
            if (p.micro_step) out_ += std::to_string(*p.micro_step);
            out_ += ',';
            append_csv_field(out_, p.op);
            out_ += ',';
            if (p.is_text) append_csv_field(out_, p.text);
            else append_double(out_, p.value);
            out_ += '\n';
        }
        first_ = false;
        if (out_.size() > (1u << 16)) flush();
    }
    void finish() {
        if (json_) out_ += first_ ? "]\n" : "\n]\n";
        flush();
    }

private:
    void flush() {
        std::fwrite(out_.data(), 1, out_.size(), stdout);
        out_.clear();
    }
    bool json_;
    bool first_ = true;
    std::string out_;
};

}  // namespace

int run_query_command(int argc, char** argv) {
    bool help = false;
    std::string error;
    auto args = parse_args(kQuerySpec, argc, argv, 2, help, error);
    if (help) {
        std::fputs(render_help(kQuerySpec).c_str(), stdout);
        return kExitOk;
    }
    auto usage_error = [](const std::string& msg) {
        std::fprintf(stderr, "msmon query: %s\n", msg.c_str());
        return kExitUsage;
    };
    if (!args) return usage_error(error);
    PointFilter filter;
    if (auto r = args->value("--rank")) {
        auto v = parse_int(*r);
        if (!v || *v < 0) return usage_error("--rank takes a rank number");
        filter.rank = static_cast<int>(*v);
    }
    filter.kind = args->value("--kind");
    filter.op = args->value("--op");
    filter.name_regex = args->value("--name");
    if (filter.name_regex) {
        try {
            std::regex test(*filter.name_regex, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
            return usage_error("--name: not a valid regular expression: " + std::string(e.what()));
        }
    }
    if (auto s = args->value("--steps")) {
        filter.steps = StepList::parse(*s, error);
        if (!filter.steps) return usage_error("--steps: " + error);
    }
    const std::string format = args->value("--format").value_or("csv");
    if (format != "csv" && format != "json") return usage_error("--format is csv or json");

    bool usage = false;
    auto reader = open_target_reader(*args, error, usage);
    if (!reader) {
        if (usage) return usage_error(error);
        std::fprintf(stderr, "msmon query: %s\n", error.c_str());
        return kExitFailure;
    }
    PointWriter writer(format == "json");
    try {
        reader->points(filter, [&](const Point& p) { writer.add(p); });
    } catch (const std::exception& e) {
        std::fprintf(stderr, "msmon query: %s\n", e.what());
        return kExitFailure;
    }
    writer.finish();
    return kExitOk;
}

}  // namespace msmon
