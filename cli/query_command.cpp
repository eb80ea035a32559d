// msmon query: one value per line, rank,kind,vpp_stage,name,step,micro_step,op,value (CSV or JSON).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <unordered_map>

#include "cli/commands.hpp"
#include "cli/json_values.hpp"
#include "cli/store_target.hpp"
#include "core/args/arg_parser.hpp"
#include "core/text/csv_record.hpp"
#include "core/text/display_escape.hpp"
#include "core/text/name_pattern.hpp"
#include "core/text/number_text.hpp"
#include "store/derived_reader.hpp"
#include "store/job_reader.hpp"
#include "store/points_that_count.hpp"

namespace msmon {

namespace {

const CommandSpec kQuerySpec{
    "query",
    "(DIR | --db PATH | --store clickhouse://HOST:PORT/DB [--job ID]) [--rank R] [--kind K | --derived] [--name REGEX] "
    "[--op OP] [--steps LIST] [--baseline DIR|DB] [--all-runs] [--format csv|json]",
    "Prints stored values, one per line: rank,kind,vpp_stage,name,step,micro_step,op,value.\n"
    "Values are the shortest text that reads back as the same double; nan, inf, -inf as such.\n"
    "A step the job trained twice (a restart resumed from an earlier checkpoint) prints the later run's value.\n"
    "With DIR, files not yet read are ingested first.\n"
    "Derived kinds are computed when read, from the stored ones, and named derived.*:\n"
    "  derived.update_ratio  |norm(param_updated) - norm(param_origin)| / norm(param_origin), op ratio, per parameter\n"
    "                        (where both are collected; from the norms, a lower bound of |dw|/|w|)\n"
    "  derived.layer_grad    the gradient norm of each layers.N's parameters together, op norm (grad_reduced, else\n"
    "                        grad_unreduced)",
    {
        {"--db", "PATH", "read this store instead of DIR's"},
        trust_db_folder_option(),
        {"--store", "URL", "read the whole job from ClickHouse (clickhouse://HOST:PORT/DB) instead"},
        {"--job", "ID", "with --store: the job (default: the one shipped to most recently)"},
        {"--rank", "R", "only this rank"},
        {"--kind", "K",
         "only this kind (grad_reduced, actv, exp_avg, ..., or a derived kind: derived.update_ratio, ...)"},
        {"--derived", "", "every derived kind the store's kinds allow, instead of the stored values"},
        {"--name", "REGEX", "only names matching REGEX (RE2 syntax, searched anywhere in the name)"},
        {"--op", "OP", "only this op (norm, min, max, mean, nans, zeros, shape, dtype, ...)"},
        {"--steps", "LIST", "only these steps: 12,20 or 0-99 or 5,10-20"},
        {"--baseline", "DIR|DB",
         "also the same values of another run (a job folder or a store), matched by rank, kind, vpp_stage,\n"
         "name, step, micro_step and op: two more columns, baseline and ratio (value / baseline); a value\n"
         "only one run has is printed with the other empty, and what did not match is counted on stderr"},
        {"--all-runs", "", "also the values a restart abandoned: a step trained twice prints twice, the earlier first"},
        {"--format", "csv|json", "output format (default csv)"},
    },
    0,
    1,
};

// A baseline run's value of one row (--baseline).
struct BaselineValue {
    bool is_text = false;
    double value = 0;
    std::string text;
};

// Writes the points to stdout. To a terminal, text from the files is escaped (a name's escape sequence would
// drive the terminal); to a file or a pipe the bytes stay exact.
class PointWriter {
public:
    PointWriter(bool json, bool terminal, bool baseline = false)
        : json_(json), terminal_(terminal), baseline_(baseline) {
        if (json_) out_ = "[";
        else
            out_ = baseline_ ? "rank,kind,vpp_stage,name,step,micro_step,op,value,baseline,ratio\n"
                             : "rank,kind,vpp_stage,name,step,micro_step,op,value\n";
    }
    std::size_t count() const { return count_; }
    // With --baseline: `p` is the row's key and its value (has_value false: only the baseline has it); `other`
    // the baseline's value, if it has one.
    void add(const Point& p, bool has_value, const std::optional<BaselineValue>& other) {
        ++count_;
        const bool ratio = has_value && other && !p.is_text && !other->is_text;
        if (json_) {
            nlohmann::ordered_json j = key_json(p);
            if (!has_value) j["value"] = nullptr;
            else if (p.is_text) j["value"] = p.text;
            else j["value"] = number_or_text(p.value);
            if (!other) j["baseline"] = nullptr;
            else if (other->is_text) j["baseline"] = other->text;
            else j["baseline"] = number_or_text(other->value);
            j["ratio"] = ratio ? number_or_text(p.value / other->value) : nlohmann::ordered_json(nullptr);
            out_ += first_ ? "\n" : ",\n";
            out_ += j.dump(-1, ' ', terminal_, nlohmann::json::error_handler_t::replace);
        } else {
            key_csv(p);
            if (has_value) {
                if (p.is_text) text(p.text);
                else append_double(out_, p.value);
            }
            out_ += ',';
            if (other) {
                if (other->is_text) text(other->text);
                else append_double(out_, other->value);
            }
            out_ += ',';
            if (ratio) append_double(out_, p.value / other->value);
            out_ += '\n';
        }
        first_ = false;
        if (out_.size() > (1u << 16)) flush();
    }
    void add(const Point& p) {
        ++count_;
        if (json_) {
            nlohmann::ordered_json j = key_json(p);
            if (p.is_text) j["value"] = p.text;
            else j["value"] = number_or_text(p.value);
            out_ += first_ ? "\n" : ",\n";
            out_ += j.dump(-1, ' ', terminal_, nlohmann::json::error_handler_t::replace);
        } else {
            key_csv(p);
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
    nlohmann::ordered_json key_json(const Point& p) const {
        nlohmann::ordered_json j;
        j["rank"] = p.rank;
        j["kind"] = p.kind;
        j["vpp_stage"] = vpp_stage_json(p.vpp_stage);
        j["name"] = p.name;
        j["step"] = p.step;
        j["micro_step"] = p.micro_step ? nlohmann::ordered_json(*p.micro_step) : nlohmann::ordered_json(nullptr);
        j["op"] = p.op;
        return j;
    }
    void key_csv(const Point& p) {
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
    }
    void text(std::string_view field) {
        if (terminal_) append_csv_field(out_, escape_for_display(field));
        else append_csv_field(out_, field);
    }
    void flush() {
        std::fwrite(out_.data(), 1, out_.size(), stdout);
        out_.clear();
    }
    bool json_, terminal_, baseline_;
    bool first_ = true;
    std::size_t count_ = 0;
    std::string out_;
};

// Streams a reader's points: those that count, or with --all-runs every one.
using PointStream = std::function<void(Reader&, const PointFilter&, const std::function<void(const Point&)>&)>;

// --baseline: the baseline's values of the same filter, held by key; each row of this run printed with its match,
// then the baseline's rows nothing matched. What did not match is counted: series only one run has (a parameter
// set changed) and values past the other's steps (runs of different lengths).
class BaselineJoin {
public:
    explicit BaselineJoin(std::unique_ptr<Reader> other) : other_(std::move(other)) {}

    void read(Reader& current, const PointFilter& f, PointWriter& writer, const PointStream& stream) {
        stream(*other_, f, [&](const Point& p) {
            const std::string k = key(p);
            if (index_.count(k)) return;
            index_.emplace(k, rows_.size());
            rows_.push_back({owned(p), {p.is_text, p.value, std::string(p.text)}, false});
        });
        stream(current, f, [&](const Point& p) {
            const auto it = index_.find(key(p));
            if (it == index_.end()) {
                writer.add(p, true, std::nullopt);
                ++only_current_;
                only_current_series_.insert(series(p));
                return;
            }
            Row& r = rows_[it->second];
            r.matched = true;
            ++matched_;
            writer.add(p, true, r.value);
            matched_series_.insert(series(p));
        });
    }
    void finish(PointWriter& writer) {
        for (const Row& r : rows_) {
            if (r.matched) continue;
            Point p;
            p.rank = r.key.rank;
            p.kind = r.key.kind;
            p.vpp_stage = r.key.vpp_stage;
            p.name = r.key.name;
            p.micro_step = r.key.micro_step;
            p.step = r.key.step;
            p.op = r.key.op;
            p.is_text = r.value.is_text;
            writer.add(p, false, r.value);
            ++only_baseline_;
            only_baseline_series_.insert(series(p));
        }
    }
    // On stderr: what matched, what one run alone has.
    void report() const {
        std::fprintf(stderr,
                     "msmon query: %zu values matched the baseline; %zu only in this run, %zu only in the baseline\n",
                     matched_, only_current_, only_baseline_);
        auto list = [&](const std::set<std::string>& series, const char* where) {
            std::vector<std::string> alone;
            for (const auto& s : series)
                if (!matched_series_.count(s)) alone.push_back(s);
            if (alone.empty()) return;
            std::string text;
            for (std::size_t i = 0; i < alone.size() && i < 5; ++i) text += (i ? ", " : "") + alone[i];
            if (alone.size() > 5) text += ", ... (" + std::to_string(alone.size() - 5) + " more)";
            std::fprintf(stderr, "msmon query: %zu series only in %s: %s\n", alone.size(), where,
                         escape_for_terminal(text).c_str());
        };
        list(only_current_series_, "this run");
        list(only_baseline_series_, "the baseline");
    }

private:
    struct OwnedKey {
        int rank = 0;
        std::string kind, vpp_stage, name, op;
        std::optional<std::int64_t> micro_step;
        std::int64_t step = 0;
    };
    struct Row {
        OwnedKey key;
        BaselineValue value;
        bool matched;
    };
    static OwnedKey owned(const Point& p) {
        return {
            p.rank, std::string(p.kind), std::string(p.vpp_stage), std::string(p.name), std::string(p.op), p.micro_step,
            p.step};
    }
    static std::string key(const Point& p) {
        std::string k = std::to_string(p.rank);
        for (std::string_view f : {p.kind, p.vpp_stage, p.name, p.op}) {
            k += '\x1f';
            k += f;
        }
        k += '\x1f' + (p.micro_step ? std::to_string(*p.micro_step) : std::string("-")) + '\x1f' +
             std::to_string(p.step);
        return k;
    }
    // "rank 3 grad_reduced layers.1.weight norm"
    static std::string series(const Point& p) {
        return "rank " + std::to_string(p.rank) + " " + std::string(p.kind) + " " + std::string(p.name) +
               (p.micro_step ? " micro " + std::to_string(*p.micro_step) : "") + " " + std::string(p.op);
    }

    std::unique_ptr<Reader> other_;
    std::unordered_map<std::string, std::size_t> index_;
    std::vector<Row> rows_;
    std::size_t matched_ = 0, only_current_ = 0, only_baseline_ = 0;
    std::set<std::string> matched_series_, only_current_series_, only_baseline_series_;
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
        const auto v = parse_rank(*r);
        if (!v) return usage_error(rank_refusal("--rank", *r));
        filter.rank = *v;
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
    std::optional<BaselineJoin> baseline;
    if (auto path = args->value("--baseline")) {
        auto other = open_job_or_store(*path, error, StoreAccess{args->has(kTrustDbFolderOption)});
        if (!other) {
            std::fprintf(stderr, "msmon query: --baseline: %s\n", escape_for_terminal(error).c_str());
            return kExitFailure;
        }
        baseline.emplace(std::move(other));
    }
    PointWriter writer(format == "json", isatty(STDOUT_FILENO) == 1, baseline.has_value());
    const bool all_runs = args->has("--all-runs");
    std::uint64_t abandoned = 0;
    const PointStream stream = [&](Reader& r, const PointFilter& f, const std::function<void(const Point&)>& sink) {
        if (all_runs) r.points(f, sink);
        else abandoned += points_that_count(r, f, sink);
    };
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
            if (baseline) baseline->read(*reader, f, writer, stream);
            else stream(*reader, f, [&](const Point& p) { writer.add(p); });
        }
        if (baseline) {
            baseline->finish(writer);
            baseline->report();
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
    if (abandoned > 0)
        std::fprintf(stderr,
                     "msmon query: left out %llu values a restart abandoned (steps trained again print the later "
                     "run's value); --all-runs prints them too\n",
                     static_cast<unsigned long long>(abandoned));
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

const CommandSpec& query_command_spec() {
    return kQuerySpec;
}

}  // namespace msmon
