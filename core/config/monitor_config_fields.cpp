// msprobe's checks, field by field (core/mon_utils.py:validate_config and set_config). Python's int excludes
// bool; a JSON 0 or 1 is not a float for eps.
#include "core/config/monitor_config_fields.hpp"

#include <set>

#include "core/detect/rules.hpp"

namespace msmon {

namespace {

using json = nlohmann::ordered_json;

bool is_int(const json& v) {
    return v.is_number_integer();
}  // JSON booleans are not numbers here

// True only for a real `true` (value() with a bool default would throw on a string).
bool is_true(const json& obj, const char* key) {
    return obj.is_object() && obj.contains(key) && obj[key].is_boolean() && obj[key].get<bool>();
}

}  // namespace

bool config_aborts_training(const json& config) {
    return is_true(config, "print_struct") || (config.is_object() && config.contains("cc_distribution") &&
                                               is_true(config["cc_distribution"], "cc_log_only"));
}

const std::vector<ConfigField>& monitor_config_fields() {
    static const std::vector<ConfigField> fields = {
        {"targets", "dict", "{}", "object of module/param prefix -> object", "what to monitor; {} = everything"},
        {"dynamic_on", "bool", "false", "true/false", "dynamic mode: true starts a collection at the next step"},
        {"start_step", "int", "0", "int >= 0 (ignored in dynamic mode)", "first step collected"},
        {"collect_times", "int", "100000000", "int >= 0", "how many collections before stopping"},
        {"step_interval", "int", "1", "int >= 1", "collect every N steps"},
        {"print_struct", "bool", "false", "true/false", "print the model structure, then ABORT training", true},
        {"module_ranks", "list", "[]", "list of ints", "ranks that monitor; [] = all"},
        {"ur_distribution", "bool", "false", "true/false (forced false for csv)", "update-ratio heatmaps"},
        {"xy_distribution", "bool", "false", "true/false", "activations and their gradients (actv, actv_grad)"},
        {"all_xy", "bool", "false", "not checked", "every module's activations"},
        {"forward_only", "bool", "false", "not checked", "activations only, no gradients"},
        {"backward_only", "bool", "false", "not checked", "activation gradients only"},
        {"mv_distribution", "bool", "false", "not checked", "Adam moments (exp_avg, exp_avg_sq)"},
        {"wg_distribution", "bool", "false", "true/false", "weight gradients (grad_unreduced, grad_reduced)"},
        {"monitor_mbs_grad", "bool", "false", "true/false (else false)", "per micro-batch weight gradients"},
        {"param_distribution", "bool", "false", "true/false", "parameters before and after the step"},
        {"mg_direction", "bool", "false", "not checked", "gradient/momentum direction agreement"},
        {"cc_distribution", "dict", "{}", "keys enable, cc_codeline, cc_pre_hook, cc_log_only",
         "communication ops; cc_log_only: true ABORTS training after step 1", true},
        {"alert", "dict", "{\"rules\": []}",
         "rules: [AnomalyTurbulence|AnomalyNan with args.threshold >= 0], dump: bool",
         "anomaly rules and the anomaly.json dump"},
        {"format", "str", "\"csv\"", "csv (anything else falls back to csv)", "output format"},
        {"ops", "list", "[\"norm\"]", "list of norm,min,max,zeros,nans,id,mean,shape,dtype", "statistics per tensor"},
        {"eps", "float", "1e-08", "a float literal (1e-08, not 0)", "threshold of the zeros op"},
        {"ndigits", "int", "6", "int 1..20", "decimal places written"},
        {"step_count_per_record", "int", "1", "int 1..1000000", "steps per CSV file"},
        {"append_output", "list", "[]", "[] or [start, end] time labels", "resume into old folders", false, true},
        {"squash_name", "bool", "false", "true/false", "shorten parameter names", false, true},
        {"stack_info", "bool", "false", "not checked", "write stack_info.csv once"},
        {"l2_targets", "dict", "{}", "linear_hook/attention_hook/moe_router_weight_hook/moe_router_logit_hook -> [str]",
         "L2 features"},
        {"recording_l2_features", "bool", "false", "true/false", "record L2 features"},
        {"sa_order", "str", "\"s,b,h,d\"", "\"s,b,h,d\" or \"b,s,h,d\"", "attention tensor layout"},
    };
    return fields;
}

ConfigCheck validate_monitor_config(const json& c) {
    ConfigCheck r;
    if (!c.is_object()) {
        r.errors.push_back("the config must be a JSON object (anything else crashes the training step)");
        return r;
    }
    auto reject = [&](const std::string& msg) { r.errors.push_back(msg); };
    auto warn = [&](const std::string& msg) { r.warnings.push_back(msg); };
    auto has = [&](const char* k) { return c.contains(k); };
    if (has("targets")) {
        const auto& t = c["targets"];
        if (!t.is_object()) reject("targets must be an object");
        else
            for (auto it = t.begin(); it != t.end(); ++it)
                if (!it.value().is_object()) reject("targets['" + it.key() + "'] must be an object");
    }
    for (const char* k : {"dynamic_on", "print_struct", "ur_distribution", "xy_distribution", "wg_distribution",
                          "param_distribution", "squash_name", "recording_l2_features"})
        if (has(k) && !c[k].is_boolean()) reject(std::string(k) + " must be true or false");
    if (has("start_step") && (!is_int(c["start_step"]) || c["start_step"].get<long long>() < 0))
        warn("start_step is not an int >= 0: msprobe uses 0");
    if (has("collect_times") && (!is_int(c["collect_times"]) || c["collect_times"].get<long long>() < 0))
        warn("collect_times is not an int >= 0: msprobe uses 100000000");
    if (has("step_interval") && (!is_int(c["step_interval"]) || c["step_interval"].get<long long>() < 1))
        warn("step_interval is not an int >= 1: msprobe uses 1");
    if (has("monitor_mbs_grad") && !c["monitor_mbs_grad"].is_boolean())
        warn("monitor_mbs_grad is not a bool: treated as false");
    if (has("module_ranks")) {
        const auto& m = c["module_ranks"];
        if (!m.is_array()) reject("module_ranks must be a list of ints");
        else
            for (const auto& e : m)
                if (!is_int(e)) reject("module_ranks must hold only ints");
    }
    if (is_true(c, "ur_distribution")) warn("ur_distribution is forced to false for csv output");
    if (is_true(c, "forward_only") && is_true(c, "backward_only"))
        warn("forward_only and backward_only both true: neither forward nor backward is hooked");
    if (has("cc_distribution")) {
        const auto& cc = c["cc_distribution"];
        static const std::set<std::string> allowed = {"enable", "cc_codeline", "cc_pre_hook", "cc_log_only"};
        if (!cc.is_object()) reject("cc_distribution must be an object");
        else
            for (auto it = cc.begin(); it != cc.end(); ++it) {
                if (!allowed.count(it.key())) reject("cc_distribution." + it.key() + " is not a key msprobe allows");
                else if (it.key() == "cc_codeline" ? !it.value().is_array() : !it.value().is_boolean())
                    reject("cc_distribution." + it.key() +
                           (it.key() == "cc_codeline" ? " must be a list" : " must be true or false"));
            }
        if (is_true(cc, "cc_log_only")) warn("cc_distribution.cc_log_only: true ABORTS training after step 1");
    }
    if (is_true(c, "print_struct")) warn("print_struct: true ABORTS training after the first step");
    if (has("alert")) {
        const auto& a = c["alert"];
        if (!a.is_object()) {
            reject("alert must be an object");
        } else {
            if (!a.contains("rules")) reject("alert must contain rules (msprobe raises KeyError otherwise)");
            else if (!a["rules"].is_array() && !a["rules"].is_null()) reject("alert.rules must be a list");
            else if (a["rules"].is_array())
                for (const auto& rule : a["rules"]) {
                    const std::string name =
                        rule.is_object() && rule.contains("rule_name") && rule["rule_name"].is_string()
                            ? rule["rule_name"].get<std::string>()
                            : "";
                    if (!rule_info(rule_of(name)).msprobe_alert)
                        reject("alert rule_name must be AnomalyTurbulence or AnomalyNan");
                    if (rule.is_object() && rule.contains("args") && rule["args"].is_object() &&
                        !rule["args"].empty()) {
                        const json t = rule["args"].contains("threshold") ? rule["args"]["threshold"] : json();
                        if (!t.is_number() || t.get<double>() < 0) reject("alert args.threshold must be a number >= 0");
                    }
                    if (rule_of(name) == Rule::AnomalyTurbulence &&
                        (!rule.contains("args") || !rule["args"].is_object() || !rule["args"].contains("threshold")))
                        warn("AnomalyTurbulence without args.threshold is skipped by msprobe");
                }
            if (a.contains("dump") && !a["dump"].is_boolean() && a["dump"] != false && !a["dump"].is_null())
                reject("alert.dump must be true or false");
        }
    }
    if (has("format") && c["format"] != "csv") warn("format other than csv falls back to csv");
    if (has("ops")) {
        const auto& ops = c["ops"];
        static const std::set<std::string> known = {"norm", "min",  "max",   "zeros", "nans",
                                                    "id",   "mean", "shape", "dtype"};
        if (!ops.is_array()) reject("ops must be a list");
        else
            for (const auto& o : ops)
                if (!o.is_string() || !known.count(o.get<std::string>()))
                    warn("op " + o.dump() + " is unknown: msprobe drops it");
    }
    if (has("eps") && !c["eps"].is_number_float()) reject("eps must be a float literal (e.g. 1e-08, not 0)");
    if (has("ndigits")) {
        const auto& n = c["ndigits"];
        const bool falsy = n.is_null() || (is_int(n) && n.get<long long>() == 0) || n == false;
        if (!falsy && (!is_int(n) || n.get<long long>() < 1 || n.get<long long>() > 20))
            reject("ndigits must be an int from 1 to 20");
        if (n.is_null()) warn("ndigits: null passes validation but crashes pandas later");
    }
    if (has("step_count_per_record")) {
        const auto& s = c["step_count_per_record"];
        if (!is_int(s) || s.get<long long>() < 1 || s.get<long long>() > 1000000)
            reject("step_count_per_record must be an int from 1 to 1000000");
    }
    if (has("append_output")) {
        const auto& a = c["append_output"];
        if (!a.is_array() || (a.size() != 0 && a.size() != 2)) reject("append_output must be [] or [start, end]");
    }
    if (has("l2_targets")) {
        const auto& l = c["l2_targets"];
        static const std::set<std::string> hooks = {"linear_hook", "attention_hook", "moe_router_weight_hook",
                                                    "moe_router_logit_hook"};
        if (!l.is_object()) reject("l2_targets must be an object");
        else
            for (auto it = l.begin(); it != l.end(); ++it) {
                if (!hooks.count(it.key())) reject("l2_targets." + it.key() + " is not an L2 hook");
                if (!it.value().is_array()) reject("l2_targets." + it.key() + " must be a list of module names");
                else
                    for (const auto& m : it.value())
                        if (!m.is_string()) reject("l2_targets." + it.key() + " must hold only strings");
            }
    }
    if (has("sa_order")) {
        std::string s = c["sa_order"].is_string() ? c["sa_order"].get<std::string>() : "";
        std::string compact;
        for (char ch : s)
            if (ch != ' ') compact.push_back(ch);
        if (compact != "s,b,h,d" && compact != "b,s,h,d") reject("sa_order must be \"s,b,h,d\" or \"b,s,h,d\"");
    }
    return r;
}

}  // namespace msmon
