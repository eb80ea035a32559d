// Folding of per-series findings into anomalies (see the header).
#include "core/detect/finding_fold.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/detect/anomaly_builder.hpp"
#include "core/detect/msprobe_rules.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

std::string ratio_text(double ratio) {
    const double r = ratio >= 1 ? ratio : 1 / ratio;
    char buf[32];
    std::snprintf(buf, sizeof buf, r >= 100 ? "%.0f" : "%.1f", r);
    return (ratio >= 1 ? "x" : "/") + std::string(buf);
}

std::string series_text(const SeriesFinding& f) {
    return f.name + (f.micro_step ? " (micro step " + std::to_string(*f.micro_step) + ")" : "");
}

}  // namespace

void FindingFold::add(SeriesFinding f) {
    Group& g = groups_[{rule_name(f.rule), f.rank, f.kind, f.step}];
    if (g.count == 0 || f.order < g.first.order) g.first = f;
    if (g.count == 0 || (f.ratio > 0 && std::abs(std::log(f.ratio)) > std::abs(std::log(g.worst.ratio)))) g.worst = f;
    ++g.count;
    changed_ = true;
}

void FindingFold::emit_completed(const std::map<std::pair<int, std::string>, std::int64_t>& latest,
                                 std::vector<AnomalyRecord>& out) {
    for (auto it = groups_.begin(); it != groups_.end();) {
        const auto& [rule, rank, kind, step] = it->first;
        const auto l = latest.find({rank, kind});
        if (l == latest.end() || l->second <= step) {
            ++it;
            continue;
        }
        out.push_back(emit(it->second));
        it = groups_.erase(it);
        changed_ = true;
    }
}

void FindingFold::emit_all(std::vector<AnomalyRecord>& out) {
    for (const auto& [key, g] : groups_) out.push_back(emit(g));
    changed_ = changed_ || !groups_.empty();
    groups_.clear();
}

void FindingFold::emit_waiting(std::chrono::steady_clock::time_point now, std::chrono::steady_clock::duration max_wait,
                               std::vector<AnomalyRecord>& out) {
    for (auto it = groups_.begin(); it != groups_.end();) {
        if (now - it->second.since < max_wait) {
            ++it;
            continue;
        }
        out.push_back(emit(it->second));
        it = groups_.erase(it);
        changed_ = true;
    }
}

std::optional<std::chrono::steady_clock::time_point> FindingFold::next_due(
    std::chrono::steady_clock::duration max_wait) const {
    std::optional<std::chrono::steady_clock::time_point> first;
    for (const auto& [_, g] : groups_)
        if (!first || g.since < *first) first = g.since;
    if (first) *first += max_wait;
    return first;
}

std::optional<std::int64_t> FindingFold::oldest_step() const {
    std::optional<std::int64_t> oldest;
    for (const auto& [key, _] : groups_)
        if (!oldest || std::get<3>(key) < *oldest) oldest = std::get<3>(key);
    return oldest;
}

bool FindingFold::take_changed() {
    const bool c = changed_;
    changed_ = false;
    return c;
}

namespace {

nlohmann::json finding_json(const SeriesFinding& f) {
    nlohmann::json j = {{"rule", rule_name(f.rule)},
                        {"rank", f.rank},
                        {"step", f.step},
                        {"order", f.order},
                        {"kind", f.kind},
                        {"vpp", f.vpp_stage},
                        {"name", f.name},
                        {"op", f.op},
                        {"value", format_double(f.value)},
                        {"ratio", format_double(f.ratio)}};
    if (f.micro_step) j["micro"] = *f.micro_step;
    if (f.reference) j["reference"] = format_double(*f.reference);
    return j;
}

SeriesFinding finding_of(const nlohmann::json& j) {
    SeriesFinding f;
    f.rule = rule_of(j.at("rule").get<std::string>());
    f.rank = j.at("rank").get<int>();
    f.step = j.at("step").get<std::int64_t>();
    f.order = j.at("order").get<std::int64_t>();
    f.kind = j.at("kind").get<std::string>();
    f.vpp_stage = j.at("vpp").get<std::string>();
    f.name = j.at("name").get<std::string>();
    f.op = j.at("op").get<std::string>();
    f.value = parse_double(j.at("value").get<std::string>()).value_or(NAN);
    f.ratio = parse_double(j.at("ratio").get<std::string>()).value_or(1);
    if (j.contains("micro")) f.micro_step = j["micro"].get<std::int64_t>();
    if (j.contains("reference")) f.reference = parse_double(j["reference"].get<std::string>()).value_or(NAN);
    return f;
}

}  // namespace

std::string FindingFold::encode() const {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& [key, g] : groups_)
        out.push_back({{"first", finding_json(g.first)}, {"worst", finding_json(g.worst)}, {"count", g.count}});
    return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool FindingFold::decode(const std::string& text) {
    groups_.clear();
    try {
        for (const auto& j : nlohmann::json::parse(text)) {
            Group g;
            g.first = finding_of(j.at("first"));
            g.worst = finding_of(j.at("worst"));
            g.count = j.at("count").get<int>();
            groups_[{rule_name(g.first.rule), g.first.rank, g.first.kind, g.first.step}] = std::move(g);
        }
        return true;
    } catch (const std::exception&) {
        groups_.clear();
        return false;
    }
}

AnomalyRecord FindingFold::emit(const Group& g) const {
    const SeriesFinding* changed_first = nullptr;
    if (g.first.rule == Rule::DeadLayer)
        for (const Rule rule : {Rule::Jump, Rule::NonFinite}) {
            const auto it = groups_.find({rule_name(rule), g.first.rank, g.first.kind, g.first.step});
            if (it != groups_.end() && it->second.first.order < g.first.order &&
                (!changed_first || it->second.first.order < changed_first->order))
                changed_first = &it->second.first;
        }
    return anomaly_of(g, changed_first);
}

namespace {

// "module.layers.1" for "module.layers.1.act.output": the module's parent, its layer.
std::string layer_of(const std::string& tensor) {
    std::string module = tensor;
    for (const char* suffix : {".output", ".input"})
        if (module.ends_with(suffix)) module.resize(module.size() - std::string_view(suffix).size());
    const auto dot = module.rfind('.');
    return dot == std::string::npos ? module : module.substr(0, dot);
}

}  // namespace

AnomalyRecord FindingFold::anomaly_of(const Group& g, const SeriesFinding* changed_first) {
    {
        const SeriesFinding& dead = g.first;
        const SeriesFinding& f = changed_first ? *changed_first : g.first;
        // msprobe's tag for the first tensor: one per (rank, kind, step, first tensor), so two parts of a group cut
        // by a partly read file stay two rows wherever anomalies are keyed by tag (ClickHouse's table).
        AnomalyAt at{.rank = f.rank,
                     .step = f.step,
                     .micro_step = f.micro_step,
                     .kind = f.kind,
                     .vpp_stage = f.vpp_stage,
                     .name = f.name,
                     .op = f.op,
                     .value = f.value,
                     .reference = f.reference,
                     .call_id = f.order,
                     .pp_stage = f.rank,
                     .vpp = parse_int(f.vpp_stage).value_or(0),
                     .tag_name = f.vpp_stage.empty()
                                     ? f.kind + (f.name.empty() ? "" : ":" + f.name) + "/rank" + std::to_string(f.rank)
                                     : msprobe_tag_name(f.kind, f.vpp_stage, f.name, f.micro_step, f.rank)};
        Rule rule = f.rule;
        std::string message;
        const std::string where = " at step " + std::to_string(f.step) + " on rank " + std::to_string(f.rank);
        const std::string others =
            g.count > 1 ? "; " + std::to_string(g.count) + " " + f.kind + " series of this rank in all" : std::string();
        if (dead.rule == Rule::DeadLayer) {
            // Named by where it began (the first module that changed), said as what it is.
            rule = dead.rule;
            at.op = dead.op;
            at.value = dead.value;
            at.reference = dead.reference;
            message = "the layer " + layer_of(dead.name) + " died" + where + ": " + dead.name +
                      " is all zeros from this step (zeros " + format_short(dead.reference.value_or(NAN)) + " -> 1)" +
                      (changed_first ? ", after " + f.name + "'s " + f.op + " " +
                                           (f.rule == Rule::Jump ? "jumped " + ratio_text(f.ratio)
                                                                 : std::string("became non-finite")) +
                                           " (" + format_short(f.value) + ")"
                                     : std::string()) +
                      (g.count > 1 ? "; " + std::to_string(g.count) + " " + dead.kind + " series of this rank all zeros"
                                   : std::string());
        } else if (f.rule == Rule::NonFinite) {
            message = f.kind + " " + series_text(f) + " became non-finite" + where + " (" + f.op + " " +
                      format_short(f.value) +
                      (f.op == "nans" ? ", was 0" : ", last finite " + format_short(f.reference.value_or(NAN))) + ")" +
                      (g.count > 1 ? others + ", this one first in forward order" : std::string());
        } else if (f.rule == Rule::ContinuityBreak) {
            const auto apart = format_apart(f.reference.value_or(NAN), f.value);  // SDC: close numbers, told apart
            message = "rank " + std::to_string(f.rank) + "'s " + series_text(f) + " changed between step " +
                      std::to_string(f.step - 1) + "'s update and step " + std::to_string(f.step) + " (" + f.op + " " +
                      apart.first + " after the update, " + apart.second +
                      " at the next step): nothing but the optimizer changes weights, " +
                      "so this copy was altered in between (silent data corruption?)" + others;
        } else if (f.rule == Rule::Drift) {
            message = f.kind + " " + series_text(f) + " " + f.op + " has drifted " + ratio_text(f.ratio) +
                      " above its early level" + where + " (recent median " + format_short(f.value) + ", early " +
                      format_short(f.reference.value_or(NAN)) + ")" + others;
        } else {
            message = f.kind + " " + series_text(f) + " " + f.op + " jumped " + ratio_text(f.ratio) + where + " (" +
                      format_short(f.value) + ", recent median " + format_short(f.reference.value_or(NAN)) + ")" +
                      others;
            if (g.count > 1 && g.worst.order != f.order)
                message += ", the largest " + series_text(g.worst) + " " + ratio_text(g.worst.ratio);
        }
        return detected_anomaly(rule, std::move(at), std::move(message));
    }
}

}  // namespace msmon
