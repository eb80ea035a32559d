// monitor_v2's checks, field by field, as msprobe's code does them (core/monitor_v2/trainer.py __init__ and
// _build_monitors, base.py _configure_ops, module/weight_grad/optimizer/param/cc.py set_config and start). Python's
// int excludes bool; bool(x) takes any value for its truth; float(x) also takes a numeric string.
#include "core/config/monitor_v2_config_fields.hpp"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>

namespace msmon {

namespace {

using json = nlohmann::ordered_json;

const char* const kAllOps = "[\"min\", \"max\", \"mean\", \"norm\", \"nans\"]";

bool is_int(const json& v) {
    return v.is_number_integer();
}

// Python's truth value of a JSON value.
bool truthy(const json& v) {
    if (v.is_null()) return false;
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number()) return v.get<double>() != 0;
    if (v.is_string() || v.is_array() || v.is_object()) return !v.empty();
    return true;
}

// Python's float(x) accepts it (numbers, bools, numeric strings): blanks around, a sign, digits with single
// underscores between them, inf/infinity/nan in any case; not hex. std::from_chars, as the locale must not matter
// (msmon-tui sets LC_ALL from the environment, and strtod then reads "0,5" under de_DE).
bool float_accepts(const json& v) {
    if (v.is_number() || v.is_boolean()) return true;
    if (!v.is_string()) return false;
    std::string s = v.get<std::string>();
    const auto first = s.find_first_not_of(" \t\n\r\f\v");
    if (first == std::string::npos) return false;
    s = s.substr(first, s.find_last_not_of(" \t\n\r\f\v") - first + 1);
    if (s[0] == '+' || s[0] == '-') s.erase(0, 1);
    std::string lower;
    for (char ch : s) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
    if (lower == "inf" || lower == "infinity" || lower == "nan") return true;
    std::string digits;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '_') {
            digits.push_back(s[i]);
            continue;
        }
        const bool between = i > 0 && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i - 1])) &&
                             std::isdigit(static_cast<unsigned char>(s[i + 1]));
        if (!between) return false;
    }
    if (digits.empty() || !(std::isdigit(static_cast<unsigned char>(digits[0])) || digits[0] == '.')) return false;
    double out = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
    return end == digits.data() + digits.size() && ec != std::errc::invalid_argument;
}

bool is_monitor_enabled(const json& monitors, const std::string& name) {
    const auto it = monitors.find(name);
    if (it == monitors.end() || !it->is_object()) return false;
    const auto e = it->find("enabled");
    return e == it->end() ? name == "module" : truthy(*e);
}

// The object cc's fields are read from: monitors.cc, or monitors.cc.cc_distribution (v1's nesting) when present.
const json& cc_fields(const json& cc) {
    const auto nested = cc.find("cc_distribution");
    return nested != cc.end() && nested->is_object() ? *nested : cc;
}

// A top-level v1 key in a v2 config: what to use instead.
const std::map<std::string, std::string>& v1_keys() {
    static const std::map<std::string, std::string> keys = {
        {"dynamic_on",
         "monitor_v2 has no dynamic mode: it reads this file once, when the job starts (set start_step/stop_step)"},
        {"targets", "use monitors.module.targets (a list of name keywords)"},
        {"xy_distribution", "use monitors.module.enabled"},
        {"all_xy", "use monitors.module.enabled with targets []"},
        {"wg_distribution", "use monitors.weight_grad.enabled"},
        {"monitor_mbs_grad", "use monitors.weight_grad.monitor_mbs_grad"},
        {"mv_distribution", "use monitors.optimizer.enabled"},
        {"param_distribution", "use monitors.param.enabled"},
        {"cc_distribution", "use monitors.cc"},
        {"module_ranks", "use rank (or monitors.cc.module_ranks)"},
        {"ops", "use monitors.<name>.ops"},
        {"eps", "use monitors.<name>.eps"},
        {"print_struct", "monitor_v2 has no such option"},
        {"stack_info", "monitor_v2 has no such option"},
        {"alert", "monitor_v2 has no alerts"},
        {"ndigits", "monitor_v2 writes values unrounded"},
        {"ur_distribution", "monitor_v2 has no such option"},
        {"mg_direction", "monitor_v2 has no such option"},
        {"append_output", "monitor_v2 has no such option"},
        {"squash_name", "monitor_v2 has no such option"},
        {"l2_targets", "monitor_v2 has no such option"},
        {"recording_l2_features", "monitor_v2 has no such option"},
        {"sa_order", "monitor_v2 has no such option"},
        {"forward_only", "monitor_v2 has no such option"},
        {"backward_only", "monitor_v2 has no such option"},
    };
    return keys;
}

// validate_int_arg(value, name, minimum, default): null means the default, anything else not an int >= minimum is
// replaced by it with a warning. Returns the value msprobe goes on with.
long long int_arg(const json& c, const char* key, long long minimum, long long fallback, const std::string& said,
                  ConfigCheck& r) {
    const auto it = c.find(key);
    if (it == c.end() || it->is_null()) return fallback;
    if (is_int(*it) && it->get<long long>() >= minimum) return it->get<long long>();
    r.warnings.push_back(std::string(key) + " is not an int >= " + std::to_string(minimum) + ": msprobe uses " + said);
    return fallback;
}

void warn_if_not_bool(const json& obj, const std::string& prefix, const char* key, ConfigCheck& r) {
    const auto it = obj.find(key);
    if (it != obj.end() && !it->is_boolean())
        r.warnings.push_back(prefix + key + " is not true/false: msprobe takes it as " +
                             (truthy(*it) ? "true" : "false"));
}

void check_ops(const json& m, const std::string& p, ConfigCheck& r) {
    const auto it = m.find("ops");
    if (it == m.end() || it->is_null()) return;
    static const std::set<std::string> known = {"min", "max", "mean", "norm", "nans"};
    if (!it->is_array() && !it->is_string()) {
        r.warnings.push_back(p + "ops is not a list: msprobe uses all five (min, max, mean, norm, nans)");
        return;
    }
    const json list = it->is_string() ? json::array({*it}) : *it;
    std::size_t valid = 0;
    for (const auto& o : list) {
        if (o.is_string() && known.count(o.get<std::string>())) ++valid;
        else r.warnings.push_back(p + "ops: " + o.dump() + " is not min, max, mean, norm or nans: msprobe drops it");
    }
    if (valid == 0 && !list.empty()) r.warnings.push_back(p + "ops has no valid op: msprobe uses all five");
}

void check_module(const json& m, ConfigCheck& r) {
    const std::string p = "monitors.module.";
    const auto t = m.find("targets");
    if (t == m.end() || (t->is_array() && t->empty())) return;
    if (t->is_array()) {
        for (const auto& k : *t)
            if (!k.is_string()) r.errors.push_back(p + "targets must hold only strings (name keywords)");
    } else if (t->is_string() && !t->get<std::string>().empty()) {
        r.warnings.push_back(p + "targets is a string: each of its characters is a keyword, so nearly every " +
                             "module matches (write [\"" + t->get<std::string>() + "\"])");
    } else if (t->is_object() && !t->empty()) {
        r.warnings.push_back(p + "targets is an object (v1's form): msprobe uses its keys as name keywords");
    } else if (truthy(*t)) {
        r.errors.push_back(p + "targets must be a list of name keywords (msprobe raises on " + t->dump() + ")");
    } else {
        r.warnings.push_back(p + "targets is not a list: every module is monitored");
    }
}

void check_weight_grad(const json& m, ConfigCheck& r) {
    const std::string p = "monitors.weight_grad.";
    const auto eps = m.find("eps");
    if (eps != m.end() && (!float_accepts(*eps) || (eps->is_number() && eps->get<double>() <= 0)))
        r.warnings.push_back(p + "eps is not a number > 0: msprobe uses 1e-08");
    warn_if_not_bool(m, p, "monitor_mbs_grad", r);
    for (const char* key : {"micro_batch_number", "grad_acc_steps"}) {
        const auto it = m.find(key);
        if (it == m.end() || it->is_null()) continue;
        const bool usable =
            (is_int(*it) && it->get<long long>() > 0) || (it->is_number_float() && it->get<double>() >= 1);
        if (!usable) r.warnings.push_back(p + key + " is not an int >= 1: msprobe ignores it");
        else if (it->is_number_float())
            r.warnings.push_back(p + key + " is not an int: msprobe truncates it to " +
                                 std::to_string(static_cast<long long>(it->get<double>())));
    }
}

void check_cc(const json& m, ConfigCheck& r) {
    std::string p = "monitors.cc.";
    const auto nested = m.find("cc_distribution");
    if (nested != m.end() && !nested->is_object()) {
        r.errors.push_back(p + "cc_distribution must be an object (msprobe raises on anything else)");
        return;
    }
    if (nested != m.end()) p += "cc_distribution.";
    const json& cc = cc_fields(m);
    const auto lines = cc.find("cc_codeline");
    if (lines != cc.end() && !lines->is_null()) {
        if (lines->is_array()) {
            for (const auto& l : *lines)
                if (!l.is_string()) r.errors.push_back(p + "cc_codeline must hold only strings (\"train.py[23]\")");
        } else if (lines->is_string()) {
            r.warnings.push_back(p + "cc_codeline is a string: each of its characters is a pattern");
        } else if (truthy(*lines)) {
            r.errors.push_back(p + "cc_codeline must be a list of code lines (msprobe raises on " + lines->dump() +
                               ")");
        }
    }
    warn_if_not_bool(cc, p, "cc_pre_hook", r);
    warn_if_not_bool(cc, p, "cc_log_only", r);
    const auto ranks = cc.find("module_ranks");
    if (ranks != cc.end()) {
        if (ranks->is_array()) {
            for (const auto& x : *ranks)
                if (!is_int(x)) r.warnings.push_back(p + "module_ranks: " + x.dump() + " is not a rank: never matches");
        } else if (ranks->is_string() || ranks->is_object()) {
            r.warnings.push_back(p + "module_ranks is not a list of ints: no rank matches it");
        } else {
            r.errors.push_back(p + "module_ranks must be a list of ints (msprobe's list() raises on " + ranks->dump() +
                               ")");
        }
    }
}

void check_monitor(const std::string& name, const json& m, ConfigCheck& r) {
    const std::string p = "monitors." + name + ".";
    warn_if_not_bool(m, p, "enabled", r);
    check_ops(m, p, r);
    if (name == "module" || name == "optimizer" || name == "param") {
        const auto eps = m.find("eps");
        if (eps != m.end() && !float_accepts(*eps))
            r.errors.push_back(p + "eps must be a number (msprobe's float() raises on " + eps->dump() + ")");
    }
    if (name == "module") check_module(m, r);
    else if (name == "weight_grad") check_weight_grad(m, r);
    else if (name == "optimizer") warn_if_not_bool(m, p, "mv_distribution", r);
    else if (name == "param") warn_if_not_bool(m, p, "param_distribution", r);
    else if (name == "cc") check_cc(m, r);
}

void check_monitors(const json& c, ConfigCheck& r) {
    const auto it = c.find("monitors");
    if (it == c.end()) {
        r.warnings.push_back("no monitors: msprobe collects nothing (add monitors.weight_grad.enabled true)");
        return;
    }
    if (!it->is_object()) {
        r.warnings.push_back("monitors is not an object: msprobe collects nothing");
        return;
    }
    static const std::set<std::string> names = {"module", "weight_grad", "optimizer", "param", "cc"};
    bool any = false;
    for (auto m = it->begin(); m != it->end(); ++m) {
        if (!names.count(m.key())) {
            r.warnings.push_back("monitors." + m.key() +
                                 " is not a monitor msprobe has (module, weight_grad, optimizer, param, cc): skipped");
            continue;
        }
        if (!m->is_object()) {
            r.warnings.push_back("monitors." + m.key() + " is not an object: msprobe skips it");
            continue;
        }
        ConfigCheck one;
        check_monitor(m.key(), *m, one);
        const bool enabled = is_monitor_enabled(*it, m.key());
        any = any || enabled;
        r.warnings.insert(r.warnings.end(), one.warnings.begin(), one.warnings.end());
        // A monitor that is off is never built: what would stop the job then only matters once it is turned on.
        for (const auto& e : one.errors)
            (enabled ? r.errors : r.warnings)
                .push_back(enabled ? e : e + " — monitors." + m.key() + " is off, so not read until it is turned on");
    }
    if (!any) r.warnings.push_back("no monitor is enabled: msprobe collects nothing");
    if (monitor_v2_aborts_training(c))
        r.warnings.push_back(
            "monitors.cc.cc_log_only: true only logs the communication call stacks (no cc statistics); msprobe's "
            "docs warn it MAY INTERRUPT training");
}

}  // namespace

const std::vector<ConfigField>& monitor_v2_config_fields() {
    static const std::vector<ConfigField> fields = {
        {"framework", "str", "\"pytorch\"", "pytorch, pt, torch, mindspore or ms (else the job fails at start)",
         "the training script's framework (unless it passes fr=)"},
        {"output_dir", "str", "\"./\"", "a path of [A-Za-z0-9_.:/-] only",
         "where rank_<N>/ folders go (MONITOR_OUTPUT_DIR is not used)"},
        {"format", "str", "\"csv\"", "csv only (anything else stops the job at start)", "output format"},
        {"async_write", "bool", "false", "true/false (reserved: writes are synchronous)", "asynchronous writes"},
        {"rank", "list", "[]", "an int or a list of ints (else all ranks)", "ranks that monitor; [] = all"},
        {"start_step", "int", "0", "int >= 0 (else 0)", "first step collected"},
        {"stop_step", "int", "null", "int >= start_step (else start_step + collect_times x step_interval)",
         "collection ends before this step (excluded)"},
        {"step_interval", "int", "1", "int >= 1 (else 1)", "collect every N steps"},
        {"step_count_per_record", "int", "1", "int 1..1000000 (else 1)", "steps per CSV file"},
        {"patch_optimizer_step", "bool", "null", "true/false; unset: true when start() gets an optimizer",
         "count steps by wrapping optimizer.step() (then do not call mon.step())"},
        {"collect_times", "int", "100000000", "int >= 1 (else 100000000)", "how many collections before stopping"},
        {"monitors.module.enabled", "bool", "false", "true/false (absent: true once monitors.module is there)",
         "module inputs, outputs and their gradients"},
        {"monitors.module.targets", "list", "[]", "list of strings", "modules whose name contains one; [] = all"},
        {"monitors.module.ops", "list", kAllOps, "list of min,max,mean,norm,nans", "statistics per tensor"},
        {"monitors.module.eps", "float", "1e-08", "a number", "numerical epsilon"},
        {"monitors.weight_grad.enabled", "bool", "false", "true/false", "weight gradients, unreduced and reduced"},
        {"monitors.weight_grad.ops", "list", kAllOps, "list of min,max,mean,norm,nans", "statistics per tensor"},
        {"monitors.weight_grad.eps", "float", "1e-08", "a number > 0 (else 1e-08)", "numerical epsilon"},
        {"monitors.weight_grad.monitor_mbs_grad", "bool", "false", "true/false (else false)",
         "per micro-batch gradients"},
        {"monitors.weight_grad.micro_batch_number", "int", "null", "int >= 1 (else ignored); wins over grad_acc_steps",
         "micro-batches per step"},
        {"monitors.weight_grad.grad_acc_steps", "int", "null", "int >= 1 (else ignored)",
         "gradient accumulation steps (or start(grad_acc_steps=))"},
        {"monitors.optimizer.enabled", "bool", "false", "true/false", "Adam moments (exp_avg, exp_avg_sq)"},
        {"monitors.optimizer.ops", "list", kAllOps, "list of min,max,mean,norm,nans", "statistics per tensor"},
        {"monitors.optimizer.eps", "float", "1e-08", "a number", "numerical epsilon"},
        {"monitors.optimizer.mv_distribution", "bool", "true", "true/false", "collect the moments"},
        {"monitors.param.enabled", "bool", "false", "true/false", "parameters before and after the step"},
        {"monitors.param.ops", "list", kAllOps, "list of min,max,mean,norm,nans", "statistics per tensor"},
        {"monitors.param.eps", "float", "1e-08", "a number", "numerical epsilon"},
        {"monitors.param.param_distribution", "bool", "true", "true/false", "collect the parameters"},
        {"monitors.cc.enabled", "bool", "false", "true/false", "communication ops' inputs and outputs"},
        {"monitors.cc.ops", "list", kAllOps, "list of min,max,mean,norm,nans", "statistics per tensor"},
        {"monitors.cc.cc_codeline", "list", "[]", "list of strings", "only calls from these code lines; [] = all"},
        {"monitors.cc.cc_pre_hook", "bool", "false", "true/false", "also the inputs of communication ops"},
        {"monitors.cc.cc_log_only", "bool", "false", "true/false", "log the call stacks only, collect nothing", true},
        {"monitors.cc.module_ranks", "list", "[]", "list of ints", "ranks whose communication is monitored; [] = all"},
    };
    return fields;
}

bool monitor_v2_aborts_training(const json& c) {
    if (!c.is_object()) return false;
    const auto monitors = c.find("monitors");
    if (monitors == c.end() || !monitors->is_object() || !is_monitor_enabled(*monitors, "cc")) return false;
    const json& cc = cc_fields((*monitors)["cc"]);
    const auto it = cc.find("cc_log_only");
    return it != cc.end() && truthy(*it);  // msprobe takes 1 or "yes" for true as well
}

ConfigCheck validate_monitor_v2_config(const json& c) {
    ConfigCheck r;
    if (!c.is_object()) {
        r.errors.push_back("the config must be a JSON object (TrainerMonitorV2 raises TypeError otherwise)");
        return r;
    }
    if (c.contains("framework")) {
        static const std::set<std::string> aliases = {"pytorch", "pt", "torch", "mindspore", "ms"};
        std::string f = c["framework"].is_string() ? c["framework"].get<std::string>() : "";
        for (auto& ch : f) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        const auto a = f.find_first_not_of(' '), b = f.find_last_not_of(' ');
        if (!aliases.count(a == std::string::npos ? "" : f.substr(a, b - a + 1)))
            r.errors.push_back("framework must be pytorch, pt, torch, mindspore or ms (msprobe raises at start)");
    }
    if (c.contains("output_dir")) {
        const json& d = c["output_dir"];
        if (!d.is_string()) r.errors.push_back("output_dir must be a string (a path)");
        else if (d.get<std::string>().find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                        "0123456789_.:/-") != std::string::npos)
            r.errors.push_back("output_dir may hold only A-Z a-z 0-9 _ . : / - (msprobe's path check refuses it)");
    }
    if (c.contains("format")) {
        std::string f = c["format"].is_string() ? c["format"].get<std::string>() : "";
        for (auto& ch : f) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        const auto a = f.find_first_not_of(' '), b = f.find_last_not_of(' ');
        if (a == std::string::npos || f.substr(a, b - a + 1) != "csv")
            r.errors.push_back("format must be csv: monitor_v2 raises at start on anything else");
    }
    warn_if_not_bool(c, "", "async_write", r);
    if (c.contains("rank")) {
        const json& rank = c["rank"];
        bool ok = is_int(rank) || rank.is_array();
        if (rank.is_array())
            for (const auto& x : rank) ok = ok && is_int(x);
        if (!ok) r.warnings.push_back("rank is not an int or a list of ints: msprobe monitors every rank");
    }
    const long long start = int_arg(c, "start_step", 0, 0, "0", r);
    const long long interval = int_arg(c, "step_interval", 1, 1, "1", r);
    const long long times = int_arg(c, "collect_times", 1, 100000000, "100000000", r);
    // Saturated: a huge step_interval must not overflow.
    const long long derived = times > (std::numeric_limits<long long>::max() - start) / interval
                                  ? std::numeric_limits<long long>::max()
                                  : start + times * interval;
    const long long stop = int_arg(c, "stop_step", start, derived,
                                   "start_step + collect_times x step_interval = " + std::to_string(derived), r);
    if (stop == start)
        r.warnings.push_back("stop_step equals start_step: nothing is collected (stop_step is excluded)");
    if (c.contains("step_count_per_record")) {
        const json& s = c["step_count_per_record"];
        if (!is_int(s) || s.get<long long>() < 1 || s.get<long long>() > 1000000)
            r.warnings.push_back("step_count_per_record is not an int from 1 to 1000000: msprobe uses 1");
    }
    warn_if_not_bool(c, "", "patch_optimizer_step", r);
    for (auto it = c.begin(); it != c.end(); ++it) {
        const auto v1 = v1_keys().find(it.key());
        if (v1 != v1_keys().end())
            r.warnings.push_back(it.key() + " is a v1 key: monitor_v2 ignores it (" + v1->second + ")");
    }
    check_monitors(c, r);
    return r;
}

std::string monitor_v2_window_text(const json& c) {
    ConfigCheck ignored;
    const json doc = c.is_object() ? c : json::object();
    const long long start = int_arg(doc, "start_step", 0, 0, "", ignored);
    const long long interval = int_arg(doc, "step_interval", 1, 1, "", ignored);
    const long long times = int_arg(doc, "collect_times", 1, 100000000, "", ignored);
    const bool explicit_stop =
        doc.contains("stop_step") && is_int(doc["stop_step"]) && doc["stop_step"].get<long long>() >= start;
    std::string text;
    if (explicit_stop && doc["stop_step"].get<long long>() == start)
        text += "collects nothing (stop_step = start_step)";
    else if (explicit_stop)
        text += "steps " + std::to_string(start) + "-" + std::to_string(doc["stop_step"].get<long long>() - 1);
    else text += "from step " + std::to_string(start);
    text += interval > 1 ? ", every " + std::to_string(interval) + " steps" : ", every step";
    if (times != 100000000) text += ", at most " + std::to_string(times) + " times";
    std::string on;
    const auto monitors = doc.find("monitors");
    if (monitors != doc.end() && monitors->is_object())
        for (const char* name : {"module", "weight_grad", "optimizer", "param", "cc"})
            if (is_monitor_enabled(*monitors, name)) on += std::string(on.empty() ? "" : ", ") + name;
    return text + (on.empty() ? "; no monitor enabled" : "; monitors " + on);
}

}  // namespace msmon
