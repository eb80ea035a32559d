// Whole-file JSON documents. nlohmann::json parses; a parse error at the very end of the text (a cut write)
// is reported as incomplete so the caller retries instead of counting an error.
#include "core/parse/json_documents.hpp"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>

#include "core/text/json_depth.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

using json = nlohmann::ordered_json;

// libstdc++'s std::regex recurses once per character: longer text is not handed to a regex.
constexpr std::size_t kMaxRegexText = 8192;

ParseOutcome parse_json(std::string_view text, json& doc, std::string& error) {
    std::string_view t = text;
    while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t'))
        t.remove_suffix(1);
    if (t.empty()) return ParseOutcome::incomplete;
    if (!json_depth_within(t)) {
        error = "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
        return ParseOutcome::invalid;
    }
    try {
        doc = json::parse(t.begin(), t.end());
        return ParseOutcome::ok;
    } catch (const json::parse_error& e) {
        error = e.what();
        // Ran out of input: the writer has not finished (these files are truncated, then written).
        return e.byte >= t.size() ? ParseOutcome::incomplete : ParseOutcome::invalid;
    } catch (const json::exception& e) {
        error = e.what();  // out_of_range.406, a number too large for a double (found by fuzzing)
        return ParseOutcome::invalid;
    }
}

// Like json::value(key, fallback) for an integer field, but a field of another type or out of range gives the
// fallback: value() throws type_error on a string and converts an out-of-range float with UB (found by fuzzing).
template <typename Int>
Int int_field(const json& e, const char* key, Int fallback) {
    const auto it = e.find(key);
    if (it == e.end()) return fallback;
    if (it->is_boolean()) return static_cast<Int>(it->get<bool>());
    if (it->is_number_unsigned()) {
        const auto v = it->get<std::uint64_t>();
        return v <= static_cast<std::uint64_t>(std::numeric_limits<Int>::max()) ? static_cast<Int>(v) : fallback;
    }
    if (it->is_number_integer()) {
        const auto v = it->get<std::int64_t>();
        return v >= std::numeric_limits<Int>::min() && v <= std::numeric_limits<Int>::max() ? static_cast<Int>(v)
                                                                                            : fallback;
    }
    if (it->is_number_float()) {
        const double v = it->get<double>();  // truncated, as value() does; NaN fails both comparisons
        return v > static_cast<double>(std::numeric_limits<Int>::min()) - 1.0 &&
                       v < static_cast<double>(std::numeric_limits<Int>::max()) + 1.0
                   ? static_cast<Int>(v)
                   : fallback;
    }
    return fallback;
}

// A string field, or "" when it is missing or not a string.
std::string string_field(const json& e, const char* key) {
    const auto it = e.find(key);
    return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The CSV kind a tag's last part names, and what the CSVs add to the module's name. Earlier msprobe versions
// tagged activations by their side ("0:1.self_attention/rank0/input_grad") where the CSVs, then and now, name
// the kind actv or actv_grad and the module with its side ("1.self_attention.input").
struct TaskKind {
    std::string kind;
    const char* name_suffix = "";
};

TaskKind task_kind(std::string_view task) {
    if (task == "post_grad") return {"grad_reduced"};
    if (task == "acc_grad" || task == "pre_grad") return {"grad_unreduced"};
    if (task == "input") return {"actv", ".input"};
    if (task == "output") return {"actv", ".output"};
    if (task == "input_grad") return {"actv_grad", ".input"};
    if (task == "output_grad") return {"actv_grad", ".output"};
    return {std::string(task)};  // actv, actv_grad, exp_avg, exp_avg_sq, param_origin, param_updated, ...
}

}  // namespace

std::optional<MsprobeMessage> parse_msprobe_message(std::string_view message) {
    static const std::regex re(
        R"(Rule (AnomalyTurbulence|AnomalyNan) reports anomaly signal in \('([^']*)', '([^']*)'\) at step (-?\d+)(?:, current value (\S+), history mean (\S+))?\.)");
    std::cmatch m;
    // std::regex recurses per character: a long message overflows the stack (found by fuzzing).
    if (message.size() > kMaxRegexText || !std::regex_search(message.begin(), message.end(), m, re))
        return std::nullopt;
    MsprobeMessage out;
    out.rule = m[1].str();
    out.tag = m[2].str();
    out.op = m[3].str();
    out.step = parse_int(m[4].str()).value_or(0);
    if (m[5].matched) {
        out.value = parse_double(m[5].str()).value_or(std::nan(""));
        out.history = parse_double(m[6].str()).value_or(std::nan(""));
    }
    return out;
}

std::optional<MsprobeTag> split_msprobe_tag(std::string_view tag) {
    const auto task_sep = tag.rfind('/');
    if (task_sep == std::string_view::npos) return std::nullopt;
    const auto rank_sep = tag.rfind('/', task_sep - 1);
    if (rank_sep == std::string_view::npos) return std::nullopt;
    const std::string_view rank_part = tag.substr(rank_sep + 1, task_sep - rank_sep - 1);
    if (rank_part.substr(0, 4) != "rank") return std::nullopt;
    MsprobeTag out;
    out.rank = static_cast<int>(parse_int(rank_part.substr(4)).value_or(0));
    const TaskKind task = task_kind(tag.substr(task_sep + 1));
    out.kind = task.kind;
    std::string_view head = tag.substr(0, rank_sep);  // "<vpp>:<name>[:<micro>]"
    const auto colon = head.find(':');
    if (colon != std::string_view::npos && parse_int(head.substr(0, colon))) {
        out.vpp_stage = std::string(head.substr(0, colon));
        head.remove_prefix(colon + 1);
    }
    const auto last = head.rfind(':');
    if (last != std::string_view::npos && parse_int(head.substr(last + 1))) {
        out.micro_step = parse_int(head.substr(last + 1));
        head = head.substr(0, last);
    }
    out.name = std::string(head) + task.name_suffix;
    return out;
}

ParseOutcome parse_anomaly_dump(std::string_view text, std::vector<AnomalyRecord>& out, std::string& error) {
    json doc;
    const ParseOutcome r = parse_json(text, doc, error);
    if (r != ParseOutcome::ok) return r;
    if (!doc.is_object()) {
        error = "an anomaly dump must be a JSON object";
        return ParseOutcome::invalid;
    }
    for (auto it = doc.begin(); it != doc.end(); ++it) {
        const json& e = it.value();
        if (!e.is_object()) continue;
        AnomalyRecord a;
        a.source = "msprobe";
        a.key = it.key();
        a.rank = int_field(e, "rank", 0);
        a.step = int_field(e, "step", std::int64_t{0});
        a.micro_step = int_field(e, "micro_step", std::int64_t{0});
        a.pp_stage = int_field(e, "pp_stage", std::int64_t{0});
        a.vpp = int_field(e, "vpp_stage", std::int64_t{0});
        a.call_id = int_field(e, "call_id", std::int64_t{-1});
        a.tag_name = string_field(e, "tag_name");
        a.message = string_field(e, "message");
        if (auto mates = e.find("group_mates"); mates != e.end() && mates->is_array())
            for (const auto& m : *mates)
                if (m.is_number_integer()) a.group_mates.push_back(m.get<int>());
        if (auto msg = parse_msprobe_message(a.message)) {
            a.rule = msg->rule;
            a.op = msg->op;
            a.value = msg->value;
            a.reference = msg->history;
            if (a.tag_name.empty()) a.tag_name = msg->tag;  // the earlier form's entries may hold it only here
        } else {
            a.rule = "unknown";
            a.value = std::nan("");
        }
        if (auto tag = split_msprobe_tag(a.tag_name)) {
            a.kind = tag->kind;
            a.vpp_stage = tag->vpp_stage;
            a.name = tag->name;
        }
        out.push_back(std::move(a));
    }
    return ParseOutcome::ok;
}

std::optional<CheckpointName> parse_checkpoint_name(std::string_view name) {
    static const std::regex re(R"(^(.+)_rank_(\d+)(?:_(\d+))?-(\d+)_(\d+)\.(ckpt|safetensors)$)");
    std::cmatch m;
    if (name.size() > kMaxRegexText || !std::regex_match(name.begin(), name.end(), m, re)) return std::nullopt;
    CheckpointName c;
    c.prefix = m[1].str();
    c.rank = static_cast<int>(parse_int(m[2].str()).value_or(0));
    c.times = m[3].matched ? parse_int(m[3].str()).value_or(0) : 0;
    c.epoch = parse_int(m[4].str()).value_or(0);
    c.step_in_epoch = parse_int(m[5].str()).value_or(0);
    return c;
}

ParseOutcome parse_health_checkpoints(std::string_view text, const std::string& source_path,
                                      std::vector<CheckpointRecord>& out, std::string& error) {
    json doc;
    const ParseOutcome r = parse_json(text, doc, error);
    if (r != ParseOutcome::ok) return r;
    if (!doc.is_array()) {
        error = "health_ckpts.json must be a JSON array";
        return ParseOutcome::invalid;
    }
    std::int64_t position = 0;
    for (const auto& e : doc) {
        if (!e.is_object() || !e.contains("ckpt_name")) continue;
        CheckpointRecord c;
        c.source_path = source_path;
        c.position = position++;
        c.name = string_field(e, "ckpt_name");
        c.healthy = int_field(e, "is_health", 1) == 0;  // 0 = healthy: the field is a "sick" flag
        if (auto n = parse_checkpoint_name(c.name)) {
            c.rank = n->rank;
            c.times = n->times;
            c.epoch = n->epoch;
            // Sink mode with sink_size 1 (MindFormers' default): the epoch field is the global step.
            c.step = n->epoch;
        }
        out.push_back(std::move(c));
    }
    return ParseOutcome::ok;
}

ParseOutcome parse_module_struct(std::string_view text, int rank, std::vector<ModuleStructEntry>& out,
                                 std::string& error) {
    json doc;
    const ParseOutcome r = parse_json(text, doc, error);
    if (r != ParseOutcome::ok) return r;
    if (!doc.is_object()) {
        error = "module_struct.json must be a JSON object";
        return ParseOutcome::invalid;
    }
    for (auto it = doc.begin(); it != doc.end(); ++it) out.push_back({rank, it.key(), it.value().dump()});
    return ParseOutcome::ok;
}

}  // namespace msmon
