// msmon query: one value per line, rank,kind,vpp_stage,name,step,micro_step,op,value (CSV or JSON).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/json_values.hpp"
#include "cli/store_target.hpp"
#include "core/args/arg_parser.hpp"
#include "core/text/csv_record.hpp"
#include "core/text/display_escape.hpp"
#include "core/text/name_pattern.hpp"
#include "core/text/number_text.hpp"
#include "store/derived_reader.hpp"

namespace msmon {

namespace {

const CommandSpec kQuerySpec{
    "query",
    "(DIR | --db PATH | --store clickhouse://HOST:PORT/DB [--job ID]) [--rank R] [--kind K | --derived] [--name REGEX] "
    "[--op OP] [--steps LIST] [--format csv|json]",
    "Prints stored values, one per line: rank,kind,vpp_stage,name,step,micro_step,op,value.\n"
    "Values are the shortest text that reads back as the same double; nan, inf, -inf as such.\n"
    "With DIR, files not yet read are ingested first.\n"
    "Derived kinds are computed when read, from the stored ones, and named derived.*:\n"
    "  derived.update_ratio  |norm(param_updated) - norm(param_origin)| / norm(param_origin), op ratio, per parameter\n"
    "                        (where both are collected; from the norms, a lower bound of |dw|/|w|)\n"
    "  derived.layer_grad    the gradient norm of each layers.N's parameters together, op norm (grad_reduced, else\n"
    "                        grad_unreduced)",
    {
        {"--db", "PATH", "read this store instead of DIR's"},
        {"--store", "URL", "read the whole job from ClickHouse (clickhouse://HOST:PORT/DB) instead"},
        {"--job", "ID", "with --store: the job (default: the one shipped to most recently)"},
        {"--rank", "R", "only this rank"},
        {"--kind", "K",
         "only this kind (grad_reduced, actv, exp_avg, ..., or a derived kind: derived.update_ratio, ...)"},
        {"--derived", "", "every derived kind the store's kinds allow, instead of the stored values"},
        {"--name", "REGEX", "only names matching REGEX (RE2 syntax, searched anywhere in the name)"},
        {"--op", "OP", "only this op (norm, min, max, mean, nans, zeros, shape, dtype, ...)"},
        {"--steps", "LIST", "only these steps: 12,20 or 0-99 or 5,10-20"},
        {"--format", "csv|json", "output format (default csv)"},
    },
    0,
    1,
};

// Writes the points to stdout. To a terminal, text from the files is escaped (a name's escape sequence would
// drive the terminal); to a file or a pipe the bytes stay exact.
class PointWriter {
public:
    PointWriter(bool json, bool terminal) : json_(json), terminal_(terminal) {
        if (json_) out_ = "[";
        else out_ = "rank,kind,vpp_stage,name,step,micro_step,op,value\n";
    }
    std::size_t count() const { return count_; }
    void add(const Point& p) {
        ++count_;
        if (json_) {
            nlohmann::ordered_json j;
            j["rank"] = p.rank;
            j["kind"] = p.kind;
            j["vpp_stage"] = vpp_stage_json(p.vpp_stage);
            j["name"] = p.name;
            j["step"] = p.step;
            j["micro_step"] = p.micro_step ? nlohmann::ordered_json(*p.micro_step) : nlohmann::ordered_json(nullptr);
            j["op"] = p.op;
            if (p.is_text) j["value"] = p.text;
            else j["value"] = number_or_text(p.value);
            out_ += first_ ? "\n" : ",\n";
            out_ += j.dump(-1, ' ', terminal_, nlohmann::json::error_handler_t::replace);
        } else {
            out_ += std::to_string(p.rank);
            out_ += ',';
            text(p.kind);
            out_ += ',';
            text(p.vpp_stage);
            out_ += ',';
            text(p.name);
            out_ += ',';
            out_ += std::to_string(p.step);
            out_ += ',';
            if (p.micro_step) out_ += std::to_string(*p.micro_step);
            out_ += ',';
            text(p.op);
            out_ += ',';
            if (p.is_text) text(p.text);
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
    void text(std::string_view field) {
        if (terminal_) append_csv_field(out_, escape_for_display(field));
        else append_csv_field(out_, field);
    }
    void flush() {
        std::fwrite(out_.data(), 1, out_.size(), stdout);
        out_.clear();
    }
    bool json_, terminal_;
    bool first_ = true;
    std::size_t count_ = 0;
    std::string out_;
};

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
    return out;
}

// Nothing matched: which filter names what the store does not have ("" if each exists; the combination is empty).
std::string unmatched_filter(Reader& reader, const PointFilter& f) {
    const StoreCatalog c = reader.catalog();
    std::vector<std::string> kinds;
    for (const auto& [kind, ops] : c.kinds) kinds.push_back(kind);
    if (f.kind && std::find(kinds.begin(), kinds.end(), *f.kind) == kinds.end())
        return "no kind '" + *f.kind + "' in the store (kinds: " + joined(kinds) + ")";
    if (f.op && *f.op != "shape" && *f.op != "dtype") {
        std::vector<std::string> ops;
        for (const auto& [kind, kind_ops] : c.kinds)
            if (!f.kind || kind == *f.kind)
                for (const auto& op : kind_ops)
                    if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
        if (std::find(ops.begin(), ops.end(), *f.op) == ops.end())
            return "no op '" + *f.op + "'" + (f.kind ? " for kind " + *f.kind : std::string(" in the store")) +
                   " (ops: " + joined(ops) + ", shape, dtype)";
    }
    if (f.rank && std::find(c.ranks.begin(), c.ranks.end(), *f.rank) == c.ranks.end())
        return "no rank " + std::to_string(*f.rank) + " in the store (" + std::to_string(c.ranks.size()) + " ranks)";
    return "";
}

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
        std::fprintf(stderr, "msmon query: %s\n", escape_for_terminal(msg).c_str());
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
    const bool derived = args->has("--derived");
    if (derived && filter.kind && !is_derived_kind(*filter.kind))
        return usage_error("--derived lists the derived kinds; --kind " + *filter.kind + " is a stored one");
    filter.op = args->value("--op");
    filter.name_regex = args->value("--name");
    if (filter.name_regex) {
        if (!NamePattern::compile(*filter.name_regex, error))
            return usage_error("--name: not a valid pattern (RE2 syntax): " + error);
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
        std::fprintf(stderr, "msmon query: %s\n", escape_for_terminal(error).c_str());
        return kExitFailure;
    }
    PointWriter writer(format == "json", isatty(STDOUT_FILENO) == 1);
    try {
        std::vector<std::optional<std::string>> kinds{filter.kind};
        if (derived && !filter.kind) {  // every derived kind there is
            kinds.clear();
            for (const auto& [kind, ops] : reader->catalog().kinds)
                if (is_derived_kind(kind)) kinds.emplace_back(kind);
        }
        for (const auto& kind : kinds) {
            PointFilter f = filter;
            f.kind = kind;
            reader->points(f, [&](const Point& p) { writer.add(p); });
        }
        if (derived && kinds.empty()) {
            std::fprintf(stderr,
                         "msmon query: no derived kind: they need param_origin and param_updated, or "
                         "grad_reduced / grad_unreduced, with norm\n");
            return kExitOk;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "msmon query: %s\n", escape_for_terminal(e.what()).c_str());
        return kExitFailure;
    }
    writer.finish();
    if (writer.count() == 0) {
        // A header alone says nothing: say which filter matched nothing (a typo in a kind is the usual reason).
        std::string why;
        try {
            why = unmatched_filter(*reader, filter);
        } catch (const std::exception&) {
        }
        std::fprintf(stderr, "msmon query: no values match%s\n",
                     why.empty() ? " these filters together" : (": " + escape_for_terminal(why)).c_str());
    }
    return kExitOk;
}

}  // namespace msmon
