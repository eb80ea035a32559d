// msprobe's alert rules, config validation and analyser order, reproduced bit for bit from its Python.
// Sources: anomaly_processor.py, core/monitor/utils.py validate_alert, PT data_writers.py add_scalar.
#include "core/detect/msprobe_rules.hpp"

#include <cassert>
#include <cmath>
#include <string>
#include <utility>

namespace msmon {

namespace {

const std::string kTurbulence(rule_name(Rule::AnomalyTurbulence));
const std::string kNan(rule_name(Rule::AnomalyNan));

// msprobe's BaseWriterWithAD.beta. The update is written as Python writes it, beta * avg + (1 - beta) * |x|:
// 1 - 0.99 is 0.010000000000000009, not 0.01, and the last bits of the history depend on it. (The build uses
// ISO C++ mode, where GCC does not contract this into an FMA.)
constexpr double kBeta = 0.99;

// Python truthiness of a JSON value: null, false, 0, "", [] and {} are falsy.
bool truthy(const nlohmann::json& v) {
    switch (v.type()) {
        case nlohmann::json::value_t::null:
            return false;
        case nlohmann::json::value_t::boolean:
            return v.get<bool>();
        case nlohmann::json::value_t::number_integer:
        case nlohmann::json::value_t::number_unsigned:
        case nlohmann::json::value_t::number_float:
            return v.get<double>() != 0.0;
        case nlohmann::json::value_t::string:
            return !v.get_ref<const std::string&>().empty();  // json::empty() is false for every string
        case nlohmann::json::value_t::array:
        case nlohmann::json::value_t::object:
            return !v.empty();
        default:
            return true;
    }
}

// `isinstance(x, (float, int))`; a Python bool is an int, so JSON true/false pass too.
bool python_number(const nlohmann::json& v) {
    return v.is_number() || v.is_boolean();
}

double python_number_value(const nlohmann::json& v) {
    return v.is_boolean() ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>();
}

const nlohmann::json* member(const nlohmann::json& object, const char* key) {
    auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
}

// mon_utils.validate_alert: what makes msprobe refuse the config (TypeError) before any rule is built.
bool validate_alert(const nlohmann::json& alert, std::string& error) {
    if (!alert.is_object()) {
        error = "alert should be a dictionary";
        return false;
    }
    const nlohmann::json* rules = member(alert, "rules");
    if (rules && rules->is_array()) {
        for (std::size_t i = 0; i < rules->size(); ++i) {
            const nlohmann::json& rule = (*rules)[i];
            if (!rule.is_object()) {  // Python: rule.get → AttributeError
                error = "alert.rules[" + std::to_string(i) + "] is not an object";
                return false;
            }
            const nlohmann::json* name = member(rule, "rule_name");
            if (name && truthy(*name) && !(name->is_string() && (*name == kTurbulence || *name == kNan))) {
                error = (name->is_string() ? name->get<std::string>() : name->dump()) + " is not supported";
                return false;
            }
            const nlohmann::json* args = member(rule, "args");
            if (args && args->is_object() && !args->empty()) {
                const nlohmann::json* threshold = member(*args, "threshold");
                if (!threshold || !python_number(*threshold) || python_number_value(*threshold) < 0) {
                    error = "threshold must be float and not less than 0 (alert.rules[" + std::to_string(i) + "])";
                    return false;
                }
            }
        }
    }
    const nlohmann::json* dump = member(alert, "dump");
    if (dump && truthy(*dump) && !dump->is_boolean()) {
        error = "dump must be bool.";
        return false;
    }
    return true;
}

// AnomalyScanner.load_rules on one spec (already validated): the rule, or nothing with the reason msprobe
// logs.
std::optional<MsprobeRule> load_rule(const nlohmann::json& spec, std::vector<std::string>& warnings,
                                     std::string& error) {
    const nlohmann::json* name = member(spec, "rule_name");
    const nlohmann::json* args = member(spec, "args");
    if (args && args->is_null()) args = nullptr;
    if (!name || name->is_null() || (*name == kTurbulence && !args)) {
        warnings.push_back("Spec is missing required keys: " + spec.dump());
        return std::nullopt;
    }
    if (!name->is_string()) {  // getattr(module, <non-str>) raises TypeError, which load_rules does not catch
        error = "rule_name " + name->dump() + " is not a string";
        return std::nullopt;
    }
    const std::string cls = name->get<std::string>();
    if (cls != kTurbulence && cls != kNan) {  // only "" gets here: getattr fails with AttributeError
        warnings.push_back("Rule class '" + cls + "' not found in the current module.");
        return std::nullopt;
    }
    MsprobeRule rule;
    rule.type = cls == kTurbulence ? MsprobeRule::Type::turbulence : MsprobeRule::Type::nan;
    if (!args) return rule;  // AnomalyNan()
    // rule_cls(**args): anything but a mapping of the constructor's own keywords is a TypeError, logged and
    // skipped.
    const std::string prefix = "Error creating instance of rule '" + cls + "': ";
    if (!args->is_object()) {
        warnings.push_back(prefix + "args is not a mapping: " + args->dump());
        return std::nullopt;
    }
    for (const auto& [key, value] : args->items()) {
        if (key != "threshold") {
            warnings.push_back(prefix + "unexpected keyword argument '" + key + "'");
            return std::nullopt;
        }
        rule.threshold = python_number_value(value);  // validate_alert checked it (args is non-empty)
    }
    if (rule.type == MsprobeRule::Type::turbulence && !rule.threshold) {
        warnings.push_back(prefix + "missing 1 required positional argument: 'threshold'");
        return std::nullopt;
    }
    return rule;
}

}  // namespace

std::optional<MsprobeAlertRules> MsprobeAlertRules::from_config(const nlohmann::json& config, std::string& error) {
    MsprobeAlertRules out;
    if (!config.is_object()) {
        error = "monitor config is not a JSON object";
        return std::nullopt;
    }
    const nlohmann::json* alert = member(config, "alert");
    if (!alert) return out;  // set_config uses {"rules": []}: no detection
    if (!validate_alert(*alert, error)) return std::nullopt;

    // set_config: alert_setting["rules"], then AnomalyScanner.load_rules.
    const nlohmann::json* rules = member(*alert, "rules");
    if (!rules) {
        error = "alert has no \"rules\" (msprobe's set_config raises KeyError)";
        return std::nullopt;
    }
    const nlohmann::json* dump = member(*alert, "dump");
    out.dump = dump && truthy(*dump);  // validate_alert: a truthy dump is a bool

    if (rules->is_null()) return out;  // load_rules(None) → []
    if (rules->is_object() || rules->is_string()) {
        // Python iterates a dict's keys or a string's characters and calls .get on a str: AttributeError.
        if (truthy(*rules)) {
            error = "alert.rules is not a list";
            return std::nullopt;
        }
        return out;
    }
    if (!rules->is_array()) {  // a number or bool is not iterable: TypeError
        error = "alert.rules is not a list";
        return std::nullopt;
    }
    for (const nlohmann::json& spec : *rules) {
        std::string load_error;
        std::optional<MsprobeRule> rule = load_rule(spec, out.warnings, load_error);
        if (!load_error.empty()) {
            error = std::move(load_error);
            return std::nullopt;
        }
        if (rule) out.rules.push_back(*rule);
    }
    return out;
}

std::string msprobe_tag_name(std::string_view kind, std::string_view vpp_stage, std::string_view name,
                             std::optional<std::int64_t> micro_step, int rank) {
    // The task suffix of the internal tag for each CSV prefix (msprobe's tag → kind mapping); the default param-hook
    // path writes grad_unreduced under acc_grad.
    std::string_view task = kind;
    if (kind == "grad_unreduced") {
        task = "acc_grad";
    } else if (kind == "grad_reduced") {
        task = "post_grad";
    }
    std::string tag;
    tag.reserve(vpp_stage.size() + name.size() + task.size() + 32);
    tag.append(vpp_stage).append(":").append(name);
    if (micro_step) tag.append(":").append(std::to_string(*micro_step));
    tag.append("/rank").append(std::to_string(rank)).append("/").append(task);
    return tag;
}

std::optional<MsprobeFinding> MsprobeSeriesState::observe(const MsprobeAlertRules& rules, std::string_view op,
                                                          double value) {
    // add_scalar returns before touching the history when there are no rules or the op is shape/dtype.
    if (rules.rules.empty() || op == "shape" || op == "dtype") return std::nullopt;

    // _update_tag2scalars: the first |x| seeds the average; the value scanned against is the one before the
    // update.
    const double abs_value = std::fabs(value);
    if (!seeded_) {
        avg_ = abs_value;
        seeded_ = true;
    }
    const double history = avg_;
    avg_ = kBeta * history + (1 - kBeta) * abs_value;

    // AnomalyScanner.scan: config order, first rule that fires wins.
    for (const MsprobeRule& rule : rules.rules) {
        if (rule.type == MsprobeRule::Type::turbulence) {
            assert(rule.threshold.has_value());
            const double up_bound = history * (1 + rule.threshold.value_or(0.0));
            if (!(abs_value > up_bound)) continue;
            // Reported for norm and mean only; on any other op add_scalar returns and later rules never run.
            if (op != "norm" && op != "mean") return std::nullopt;
            return MsprobeFinding{Rule::AnomalyTurbulence, value, history};
        }
        if (std::isnan(value) || (rule.threshold && abs_value > *rule.threshold)) {
            return MsprobeFinding{Rule::AnomalyNan, value, history};
        }
    }
    return std::nullopt;
}

int msprobe_train_stage(std::string_view tag_name) {
    // MonitorConst.TRAIN_STAGE on tag_name.split("/")[-1].
    const std::size_t slash = tag_name.rfind('/');
    const std::string_view task = slash == std::string_view::npos ? tag_name : tag_name.substr(slash + 1);
    if (task == "actv") return 0;
    if (task == "actv_grad" || task == "pre_grad" || task == "post_grad" || task == "acc_grad") return 1;
    if (task == "exp_avg" || task == "exp_avg_sq") return 2;
    return -1;  // MonitorConst.DEFAULT_STAGE: param_origin, mg_direction, cc, L2 sort before everything
}

bool msprobe_analyser_less(const AnalyserKey& a, const AnalyserKey& b) {
    // GradAnomalyData.__lt__: [step, micro_step, train_stage, ±vpp, ±pp, call_id] compared as lists, where
    // the sign is chosen by the LEFT operand's stage for both sides. Descending order is compared by swapping
    // the operands instead of negating, which Python's big ints allow and int64 would not.
    const int stage_a = msprobe_train_stage(a.tag_name);
    const int stage_b = msprobe_train_stage(b.tag_name);
    if (a.step != b.step) return a.step < b.step;
    if (a.micro_step != b.micro_step) return a.micro_step < b.micro_step;
    if (stage_a != stage_b) return stage_a < stage_b;
    const bool forward = stage_a == 0;
    if (a.vpp_stage != b.vpp_stage) return forward ? a.vpp_stage < b.vpp_stage : b.vpp_stage < a.vpp_stage;
    if (a.pp_stage != b.pp_stage) return forward ? a.pp_stage < b.pp_stage : b.pp_stage < a.pp_stage;
    return a.call_id < b.call_id;
}

}  // namespace msmon
