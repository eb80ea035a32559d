// Tests for core/detect/msprobe_rules: rule semantics, config, tags, analyser order, and the real alert
// fixture.
#include "core/detect/msprobe_rules.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support/reference_csv.hpp"
#include "tests/support/test_env.hpp"

namespace msmon {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

MsprobeRule turbulence(double t) {
    return MsprobeRule{MsprobeRule::Type::turbulence, t};
}
MsprobeRule nan_rule(std::optional<double> t = std::nullopt) {
    return MsprobeRule{MsprobeRule::Type::nan, t};
}

MsprobeAlertRules rules_of(std::vector<MsprobeRule> rules) {
    MsprobeAlertRules r;
    r.rules = std::move(rules);
    return r;
}

// NaN-aware exact equality: the histories are pinned to the bit, as Python computes them.
bool same(double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || a == b;
}

// ---------------------------------------------------------------------------------------------------------------
// 1. Rule semantics. Expected histories and final averages come from running msprobe's own arithmetic in
// Python (`avg = 0.99 * avg + (1 - 0.99) * abs(x)`, repr of the result), not from this implementation.

struct Expected {
    const char* rule = nullptr;  // nullptr: nothing reported for this value
    double history = 0;
};
constexpr Expected kQuiet{};
Expected turb(double h) {
    return {"AnomalyTurbulence", h};
}
Expected nan_at(double h) {
    return {"AnomalyNan", h};
}

struct RuleCase {
    const char* behaviour;
    std::vector<MsprobeRule> rules;
    const char* op;
    std::vector<double> values;
    std::vector<Expected> expected;  // one per value
    double final_average;
};

std::vector<RuleCase> rule_cases() {
    const std::vector<MsprobeRule> fixture_rules{turbulence(0.5), nan_rule()};
    return {
        {"first value seeds the history and is compared with itself", fixture_rules, "norm", {10}, {kQuiet}, 10.0},
        {"a rise above history*(1+t) fires and reports the history before the update",
         fixture_rules,
         "norm",
         {1, 1.6},
         {kQuiet, turb(1.0)},
         1.006},
        {"the bound is strict and the history is an EMA with beta 0.99",
         fixture_rules,
         "norm",
         {2, 3, 4, 5},
         {kQuiet, kQuiet, turb(2.01), turb(2.0298999999999996)},
         2.059601},
        {"a zero history makes any non-zero value fire; the EMA uses 1-0.99 (0.010000000000000009), not 0.01",
         {turbulence(0.5)},
         "norm",
         {0, 1e-30},
         {kQuiet, turb(0.0)},
         1.000000000000001e-32},
        {"turbulence is one-sided on |x|: a drop is quiet, a negative spike fires",
         fixture_rules,
         "norm",
         {1, 0.0, -1.6},
         {kQuiet, kQuiet, turb(0.99)},
         0.9961},
        {"turbulence is reported for mean as for norm", fixture_rules, "mean", {1, -3}, {kQuiet, turb(1.0)}, 1.02},
        {"turbulence firing on max is swallowed and the later Nan rule is not evaluated",
         {turbulence(0.5), nan_rule(1.0)},
         "max",
         {1, 3},
         {kQuiet, kQuiet},
         1.02},
        {"the same values on norm report the turbulence",
         {turbulence(0.5), nan_rule(1.0)},
         "norm",
         {1, 3},
         {kQuiet, turb(1.0)},
         1.02},
        {"with Nan first, Nan fires on max",
         {nan_rule(1.0), turbulence(0.5)},
         "max",
         {1, 3},
         {kQuiet, nan_at(1.0)},
         1.02},
        {"first rule that fires wins: Nan(threshold) before Turbulence",
         {nan_rule(2.0), turbulence(0.5)},
         "norm",
         {1, 3},
         {kQuiet, nan_at(1.0)},
         1.02},
        {"first rule that fires wins: Turbulence before Nan(threshold)",
         {turbulence(0.5), nan_rule(2.0)},
         "norm",
         {1, 3},
         {kQuiet, turb(1.0)},
         1.02},
        {"NaN fires Nan, then poisons the history so a later spike is quiet",
         fixture_rules,
         "norm",
         {1, kNaN, 1000},
         {kQuiet, nan_at(1.0), kQuiet},
         kNaN},
        {"a NaN first value seeds a NaN history",
         fixture_rules,
         "norm",
         {kNaN, kNaN},
         {nan_at(kNaN), nan_at(kNaN)},
         kNaN},
        {"Nan fires on NaN for any op, min included", fixture_rules, "min", {1, kNaN}, {kQuiet, nan_at(1.0)}, kNaN},
        {"Nan with a threshold fires strictly above it, on |x|",
         {nan_rule(5.0)},
         "min",
         {1, -6, 5},
         {kQuiet, nan_at(1.0), kQuiet},
         1.0895000000000001},
        {"inf fires turbulence, then inf history silences it",
         fixture_rules,
         "norm",
         {1, kInf, kInf, 1},
         {kQuiet, turb(1.0), kQuiet, kQuiet},
         kInf},
        {"Nan without a threshold ignores inf; with one it fires",
         {nan_rule(1e300)},
         "norm",
         {1, kInf},
         {kQuiet, nan_at(1.0)},
         kInf},
        {"zero after zero is quiet (0 > 0 is false)", {turbulence(0.5)}, "norm", {0, 0}, {kQuiet, kQuiet}, 0.0},
        {"a constant negative series is quiet (history of |x|)",
         {turbulence(0.5)},
         "norm",
         {-4, -4},
         {kQuiet, kQuiet},
         4.0},
    };
}

TEST(MsprobeRules, table_of_rule_semantics_matches_msprobe_arithmetic) {
    for (const RuleCase& c : rule_cases()) {
        SCOPED_TRACE(c.behaviour);
        ASSERT_EQ(c.values.size(), c.expected.size());
        const MsprobeAlertRules rules = rules_of(c.rules);
        MsprobeSeriesState state;
        for (std::size_t i = 0; i < c.values.size(); ++i) {
            SCOPED_TRACE("value #" + std::to_string(i));
            const std::optional<MsprobeFinding> got = state.observe(rules, c.op, c.values[i]);
            const Expected& want = c.expected[i];
            if (!want.rule) {
                EXPECT_FALSE(got.has_value()) << "unexpected " << rule_name(got->rule) << " history " << got->history;
                continue;
            }
            ASSERT_TRUE(got.has_value()) << "expected " << want.rule;
            EXPECT_EQ(rule_name(got->rule), want.rule);
            EXPECT_TRUE(same(got->value, c.values[i])) << got->value;
            EXPECT_TRUE(same(got->history, want.history)) << got->history << " != " << want.history;
        }
        EXPECT_TRUE(state.seeded());
        EXPECT_TRUE(same(state.average(), c.final_average))
            << std::hexfloat << state.average() << " != " << c.final_average;
    }
}

TEST(MsprobeRules, no_rules_means_no_detection_and_no_history) {
    MsprobeSeriesState state;
    EXPECT_FALSE(state.observe(MsprobeAlertRules{}, "norm", kNaN).has_value());
    EXPECT_FALSE(state.seeded());
}

TEST(MsprobeRules, shape_and_dtype_are_never_scanned) {
    const MsprobeAlertRules rules = rules_of({nan_rule()});
    MsprobeSeriesState state;
    EXPECT_FALSE(state.observe(rules, "shape", kNaN).has_value());
    EXPECT_FALSE(state.observe(rules, "dtype", kNaN).has_value());
    EXPECT_FALSE(state.seeded());
}

TEST(MsprobeRules, restored_history_is_used_as_if_never_interrupted) {
    const MsprobeAlertRules rules = rules_of({turbulence(0.5)});
    MsprobeSeriesState state;
    state.restore(2.0);
    const auto f = state.observe(rules, "norm", 3.5);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->history, 2.0);
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Config parsing (validate_alert + set_config + AnomalyScanner.load_rules).

std::optional<MsprobeAlertRules> parse(const std::string& text, std::string& error) {
    return MsprobeAlertRules::from_config(nlohmann::json::parse(text), error);
}

MsprobeAlertRules accepted(const std::string& text) {
    std::string error;
    auto r = parse(text, error);
    EXPECT_TRUE(r.has_value()) << text << ": " << error;
    return r.value_or(MsprobeAlertRules{});
}

std::string rejected(const std::string& text) {
    std::string error;
    auto r = parse(text, error);
    EXPECT_FALSE(r.has_value()) << "accepted: " << text;
    EXPECT_FALSE(error.empty()) << text;
    return error;
}

void expect_fixture_rules(const MsprobeAlertRules& r) {
    ASSERT_EQ(r.rules.size(), 2u);
    EXPECT_EQ(r.rules[0].type, MsprobeRule::Type::turbulence);
    EXPECT_EQ(r.rules[0].threshold, 0.5);
    EXPECT_EQ(r.rules[1].type, MsprobeRule::Type::nan);
    EXPECT_FALSE(r.rules[1].threshold.has_value());
    EXPECT_TRUE(r.dump);
    EXPECT_TRUE(r.warnings.empty());
}

TEST(MsprobeAlertConfig, fixture_config_gives_turbulence_then_nan_with_dump) {
    const std::string shared = test::shared_dir();
    if (shared.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: no msprobe-real fixture");
    const std::string text = test::read_file(shared + "/fixtures/msprobe-real/alert/config.json");
    std::string error;
    auto r = MsprobeAlertRules::from_config(nlohmann::json::parse(text), error);
    ASSERT_TRUE(r.has_value()) << error;
    expect_fixture_rules(*r);
}

TEST(MsprobeAlertConfig, inline_copy_of_the_fixture_alert_parses_the_same) {
    expect_fixture_rules(accepted(R"({"ops": ["norm"], "alert": {"rules": [
        {"rule_name": "AnomalyTurbulence", "args": {"threshold": 0.5}}, {"rule_name": "AnomalyNan"}],
        "dump": true}})"));
}

TEST(MsprobeAlertConfig, no_alert_section_means_no_rules_and_no_error) {
    const MsprobeAlertRules r = accepted(R"({"ops": ["norm"]})");
    EXPECT_TRUE(r.rules.empty());
    EXPECT_FALSE(r.dump);
}

TEST(MsprobeAlertConfig, alert_without_rules_is_an_error_like_msprobes_key_error) {
    EXPECT_NE(rejected(R"({"alert": {"dump": true}})").find("rules"), std::string::npos);
}

TEST(MsprobeAlertConfig, unknown_rule_name_is_rejected_with_its_name) {
    EXPECT_NE(
        rejected(R"({"alert": {"rules": [{"rule_name": "AnomalySpike"}]}})").find("AnomalySpike is not supported"),
        std::string::npos);
    // A later bad rule rejects the whole config even after good ones.
    EXPECT_NE(rejected(R"({"alert": {"rules": [{"rule_name": "AnomalyNan"}, {"rule_name": "anomalynan"}]}})")
                  .find("anomalynan"),
              std::string::npos);
    EXPECT_NE(rejected(R"({"alert": {"rules": [{"rule_name": 7}]}})").find("not supported"), std::string::npos);
}

TEST(MsprobeAlertConfig, bad_thresholds_are_rejected_with_the_reason) {
    for (const char* text : {
             R"({"alert": {"rules": [{"rule_name": "AnomalyTurbulence", "args": {"threshold": -0.1}}]}})",
             R"({"alert": {"rules": [{"rule_name": "AnomalyTurbulence", "args": {"threshold": "0.5"}}]}})",
             R"({"alert": {"rules": [{"rule_name": "AnomalyTurbulence", "args": {"threshold": null}}]}})",
             R"({"alert": {"rules": [{"rule_name": "AnomalyTurbulence", "args": {"limit": 0.5}}]}})",
             R"({"alert": {"rules": [{"rule_name": "AnomalyNan", "args": {"threshold": [1]}}]}})",
         }) {
        SCOPED_TRACE(text);
        EXPECT_NE(rejected(text).find("threshold must be float and not less than 0"), std::string::npos);
    }
}

TEST(MsprobeAlertConfig, structural_errors_are_rejected) {
    EXPECT_NE(rejected(R"({"alert": [1]})").find("dictionary"), std::string::npos);
    EXPECT_NE(rejected(R"({"alert": null})").find("dictionary"), std::string::npos);
    EXPECT_NE(rejected(R"({"alert": {"rules": [], "dump": "yes"}})").find("dump must be bool"), std::string::npos);
    EXPECT_NE(rejected(R"({"alert": {"rules": ["AnomalyNan"]}})").find("not an object"), std::string::npos);
    EXPECT_NE(rejected(R"({"alert": {"rules": {"AnomalyNan": {}}}})").find("not a list"), std::string::npos);
    EXPECT_NE(rejected(R"({"alert": {"rules": 1}})").find("not a list"), std::string::npos);
    EXPECT_NE(rejected(R"({"alert": {"rules": "AnomalyNan"}})").find("not a list"), std::string::npos);
    EXPECT_NE(rejected(R"([1, 2])").find("not a JSON object"), std::string::npos);
}

TEST(MsprobeAlertConfig, turbulence_without_args_is_skipped_with_a_warning) {
    const MsprobeAlertRules r =
        accepted(R"({"alert": {"rules": [{"rule_name": "AnomalyTurbulence"}, {"rule_name": "AnomalyNan"}]}})");
    ASSERT_EQ(r.rules.size(), 1u);
    EXPECT_EQ(r.rules[0].type, MsprobeRule::Type::nan);
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_NE(r.warnings[0].find("missing required keys"), std::string::npos) << r.warnings[0];
}

TEST(MsprobeAlertConfig, rules_msprobe_cannot_construct_are_skipped_with_a_warning) {
    // Empty args pass validate_alert but AnomalyTurbulence() needs a threshold; extra keywords are a
    // TypeError; a rule without a name is "missing required keys"; "" is not a class of the module.
    const MsprobeAlertRules r = accepted(R"({"alert": {"rules": [
        {"rule_name": "AnomalyTurbulence", "args": {}},
        {"rule_name": "AnomalyTurbulence", "args": {"threshold": 1, "window": 3}},
        {"rule_name": "AnomalyNan", "args": [1]},
        {"args": {"threshold": 1}},
        {"rule_name": ""},
        {"rule_name": "AnomalyNan", "args": {}}]}})");
    ASSERT_EQ(r.rules.size(), 1u);
    EXPECT_EQ(r.rules[0].type, MsprobeRule::Type::nan);
    EXPECT_FALSE(r.rules[0].threshold.has_value());
    EXPECT_EQ(r.warnings.size(), 5u);
}

TEST(MsprobeAlertConfig, thresholds_keep_their_value_and_order) {
    const MsprobeAlertRules r = accepted(R"({"alert": {"rules": [
        {"rule_name": "AnomalyNan", "args": {"threshold": 100}},
        {"rule_name": "AnomalyTurbulence", "args": {"threshold": 0}},
        {"rule_name": "AnomalyTurbulence", "args": {"threshold": true}}], "dump": 0}})");
    ASSERT_EQ(r.rules.size(), 3u);
    EXPECT_EQ(r.rules[0].type, MsprobeRule::Type::nan);
    EXPECT_EQ(r.rules[0].threshold, 100.0);
    EXPECT_EQ(r.rules[1].threshold, 0.0);
    EXPECT_EQ(r.rules[2].threshold, 1.0);  // a Python bool is an int: validate_alert accepts true as 1
    EXPECT_FALSE(r.dump);                  // a falsy dump is not validated and means no dump
}

TEST(MsprobeAlertConfig, null_or_empty_rules_mean_no_detection) {
    EXPECT_TRUE(accepted(R"({"alert": {"rules": null}})").rules.empty());
    EXPECT_TRUE(accepted(R"({"alert": {"rules": []}})").rules.empty());
    // Python iterates them without finding a spec.
    EXPECT_TRUE(accepted(R"({"alert": {"rules": {}}})").rules.empty());
    EXPECT_TRUE(accepted(R"({"alert": {"rules": ""}})").rules.empty());
}

// ---------------------------------------------------------------------------------------------------------------
// Tag names and the analyser order.

TEST(MsprobeTagName, each_csv_kind_maps_to_msprobes_task) {
    EXPECT_EQ(msprobe_tag_name("actv", "0", "layers.0.fc1.input", 0, 0), "0:layers.0.fc1.input:0/rank0/actv");
    EXPECT_EQ(msprobe_tag_name("actv_grad", "0", ".input", 0, 0), "0:.input:0/rank0/actv_grad");
    EXPECT_EQ(msprobe_tag_name("grad_unreduced", "0", "head.bias", std::nullopt, 0), "0:head.bias/rank0/acc_grad");
    EXPECT_EQ(msprobe_tag_name("grad_unreduced", "1", "head.bias", 2, 5), "1:head.bias:2/rank5/acc_grad");
    EXPECT_EQ(msprobe_tag_name("grad_reduced", "0", "embed.weight", std::nullopt, 3), "0:embed.weight/rank3/post_grad");
    for (const char* kind : {"exp_avg", "exp_avg_sq", "param_origin", "param_updated"}) {
        EXPECT_EQ(msprobe_tag_name(kind, "0", "w", std::nullopt, 1), std::string("0:w/rank1/") + kind);
    }
}

TEST(MsprobeAnalyser, train_stage_comes_from_the_last_tag_segment) {
    EXPECT_EQ(msprobe_train_stage("0:a:0/rank0/actv"), 0);
    for (const char* t : {"actv_grad", "pre_grad", "post_grad", "acc_grad"}) {
        EXPECT_EQ(msprobe_train_stage(std::string("0:a/rank0/") + t), 1) << t;
    }
    EXPECT_EQ(msprobe_train_stage("0:a/rank0/exp_avg"), 2);
    EXPECT_EQ(msprobe_train_stage("0:a/rank0/exp_avg_sq"), 2);
    EXPECT_EQ(msprobe_train_stage("0:a/rank0/param_origin"), -1);
    EXPECT_EQ(msprobe_train_stage("all_reduce/rank0/post_0"), -1);
    EXPECT_EQ(msprobe_train_stage("actv"), 0);  // no '/': split("/")[-1] is the whole name
}

AnalyserKey key(std::int64_t step, const std::string& task, std::int64_t vpp, std::int64_t pp, std::int64_t call) {
    return AnalyserKey{step, 0, "0:x/rank0/" + task, vpp, pp, call};
}

TEST(MsprobeAnalyser, spec_example_backward_puts_later_pipeline_stage_first_then_call_id) {
    // As msprobe's analyser orders them: rank 1 (pp 1) post_grad call 118, then rank 0 actv_grad call 41, then rank 0
    // post_grad call 118.
    std::vector<AnalyserKey> v{key(7, "actv_grad", 0, 0, 41), key(7, "post_grad", 0, 0, 118),
                               key(7, "post_grad", 0, 1, 118)};
    std::stable_sort(v.begin(), v.end(), msprobe_analyser_less);
    EXPECT_EQ(v[0].pp_stage, 1);
    EXPECT_EQ(v[1].call_id, 41);
    EXPECT_EQ(v[2].call_id, 118);
}

TEST(MsprobeAnalyser, order_is_step_micro_stage_then_signed_stages_then_call_id) {
    EXPECT_TRUE(msprobe_analyser_less(key(1, "exp_avg", 0, 0, 0), key(2, "actv", 0, 0, 0)));
    EXPECT_TRUE(msprobe_analyser_less(key(1, "param_origin", 0, 0, 9), key(1, "actv", 0, 0, 0)));  // -1 first
    EXPECT_TRUE(msprobe_analyser_less(key(1, "actv", 0, 0, 9), key(1, "actv_grad", 0, 0, 0)));
    EXPECT_TRUE(msprobe_analyser_less(key(1, "actv", 0, 0, 9), key(1, "actv", 1, 0, 0)));          // forward: +vpp
    EXPECT_TRUE(msprobe_analyser_less(key(1, "actv", 0, 0, 9), key(1, "actv", 0, 1, 0)));          // forward: +pp
    EXPECT_TRUE(msprobe_analyser_less(key(1, "acc_grad", 1, 0, 9), key(1, "acc_grad", 0, 0, 0)));  // -vpp
    EXPECT_TRUE(msprobe_analyser_less(key(1, "exp_avg", 0, 1, 9), key(1, "exp_avg", 0, 0, 0)));    // -pp
    EXPECT_TRUE(msprobe_analyser_less(key(1, "actv", 0, 0, 1), key(1, "actv", 0, 0, 2)));
    AnalyserKey a = key(1, "actv", 0, 0, 1), b = key(1, "actv", 0, 0, 1);
    b.micro_step = 1;
    EXPECT_TRUE(msprobe_analyser_less(a, b));
    EXPECT_FALSE(msprobe_analyser_less(a, a));
}

TEST(MsprobeAnalyser, left_operand_sign_rule_still_gives_a_strict_weak_order) {
    // The sign of vpp/pp is chosen by the left operand only, but it only matters when both stages are equal,
    // so the comparison stays a strict weak order (which std::stable_sort needs). Checked exhaustively on a
    // grid.
    std::vector<AnalyserKey> keys;
    for (const char* task : {"actv", "actv_grad", "exp_avg", "param_origin"})
        for (int vpp : {0, 1})
            for (int pp : {0, 1})
                for (int call : {-1, 3}) keys.push_back(key(5, task, vpp, pp, call));
    auto equiv = [](const AnalyserKey& x, const AnalyserKey& y) {
        return !msprobe_analyser_less(x, y) && !msprobe_analyser_less(y, x);
    };
    int violations = 0;
    for (const auto& a : keys) {
        violations += msprobe_analyser_less(a, a);
        for (const auto& b : keys) {
            violations += msprobe_analyser_less(a, b) && msprobe_analyser_less(b, a);
            for (const auto& c : keys) {
                violations +=
                    msprobe_analyser_less(a, b) && msprobe_analyser_less(b, c) && !msprobe_analyser_less(a, c);
                violations += equiv(a, b) && equiv(b, c) && !equiv(a, c);
            }
        }
    }
    EXPECT_EQ(violations, 0);
}

// ---------------------------------------------------------------------------------------------------------------
// 3-4. The real msprobe alert fixture.

std::string alert_fixture_dir() {
    const std::string shared = test::shared_dir();
    return shared.empty() ? std::string() : shared + "/fixtures/msprobe-real/alert";
}

using Signal = std::tuple<std::string, std::string, std::string, std::int64_t>;  // rule, tag, op, step

std::string describe(const Signal& s) {
    return std::get<0>(s) + " ('" + std::get<1>(s) + "', '" + std::get<2>(s) + "') step " +
           std::to_string(std::get<3>(s));
}

struct ConsoleSignal {
    double value = 0;
    double history = 0;
};

// "[INFO] \x1b[93m> Rule X reports anomaly signal in ('TAG', 'OP') at step N, current value V, history mean
// H." Only the trainer's lines: the analyser's "i: Rule ..." echoes of dumped messages are not detections.
std::map<Signal, ConsoleSignal> parse_console(const std::string& text, int& trainer_lines, int& all_lines) {
    static const std::regex re(
        R"(Rule (AnomalyTurbulence|AnomalyNan) reports anomaly signal in \('([^']*)', '([^']*)'\) at step (-?\d+), current value (\S+), history mean (\S+)\.)");
    std::map<Signal, ConsoleSignal> out;
    std::istringstream in(text);
    std::string line;
    trainer_lines = all_lines = 0;
    while (std::getline(in, line)) {
        std::smatch m;
        if (!std::regex_search(line, m, re)) continue;
        ++all_lines;
        if (line.find("\x1b[93m> Rule ") == std::string::npos) continue;
        ++trainer_lines;
        ConsoleSignal s;
        EXPECT_TRUE(test::reference_double(m[5].str(), s.value)) << line;
        EXPECT_TRUE(test::reference_double(m[6].str(), s.history)) << line;
        out[Signal{m[1].str(), m[2].str(), m[3].str(), std::stoll(m[4].str())}] = s;
    }
    return out;
}

struct Observation {
    std::int64_t step;
    double value;
};

// Every numeric value of every CSV of the run, by (tag, op), in step order.
std::map<std::pair<std::string, std::string>, std::vector<Observation>> read_fixture_series(const std::string& dir,
                                                                                            int& values) {
    std::map<std::pair<std::string, std::string>, std::vector<Observation>> series;
    static const std::regex file_re(R"((.*)_(\d+)-(\d+)\.csv)");
    values = 0;
    for (const std::string& path : test::find_files(dir, ".csv")) {
        const std::string base = std::filesystem::path(path).filename().string();
        std::smatch fm;
        if (!std::regex_match(base, fm, file_re)) continue;
        const std::string kind = fm[1].str();
        const auto records = test::parse_csv_reference(test::read_file(path));
        if (records.empty()) continue;
        const std::vector<std::string>& header = records[0];
        const bool has_micro = header.size() > 3 && header[3] == "micro_step";
        const std::size_t first_op = has_micro ? 4 : 3;
        for (std::size_t r = 1; r < records.size(); ++r) {
            const auto& rec = records[r];
            EXPECT_EQ(rec.size(), header.size()) << path << " record " << r;
            if (rec.size() != header.size()) continue;
            std::optional<std::int64_t> micro;
            if (has_micro) micro = std::stoll(rec[3]);
            const std::string tag = msprobe_tag_name(kind, rec[0], rec[1], micro, 0);
            const std::int64_t step = std::stoll(rec[2]);
            for (std::size_t c = first_op; c < header.size(); ++c) {
                if (header[c] == "shape" || header[c] == "dtype") continue;
                double v = 0;
                EXPECT_TRUE(test::reference_double(rec[c], v)) << path << " " << header[c] << "=" << rec[c];
                series[{tag, header[c]}].push_back({step, v});
                ++values;
            }
        }
    }
    for (auto& [k, obs] : series) {
        std::stable_sort(obs.begin(), obs.end(),
                         [](const Observation& a, const Observation& b) { return a.step < b.step; });
    }
    return series;
}

TEST(MsprobeFixtureAlert, rules_on_the_csvs_fire_exactly_where_msprobe_printed) {
    const std::string dir = alert_fixture_dir();
    if (dir.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: no msprobe-real alert fixture");

    std::string error;
    auto rules = MsprobeAlertRules::from_config(nlohmann::json::parse(test::read_file(dir + "/config.json")), error);
    ASSERT_TRUE(rules.has_value()) << error;

    int trainer_lines = 0, all_lines = 0;
    const auto console = parse_console(test::read_file(dir + "/console.log"), trainer_lines, all_lines);
    // 1151 detections printed by the trainer; the 28 other matching lines are anomaly_processor's top-8 and
    // top-20 listings, which repeat dumped messages.
    EXPECT_EQ(all_lines, 1179);
    EXPECT_EQ(trainer_lines, 1151);
    EXPECT_EQ(console.size(), 1151u);

    int values = 0;
    const auto series = read_fixture_series(dir + "/monitor_output/Nov22_13-56-03-rank0-9a9346e9", values);
    EXPECT_EQ(values, 2760 * 6);  // every data row has six scanned ops (min max norm mean nans zeros)

    std::map<Signal, MsprobeFinding> computed;
    for (const auto& [key, obs] : series) {
        MsprobeSeriesState state;
        for (const Observation& o : obs) {
            if (auto f = state.observe(*rules, key.second, o.value)) {
                computed[Signal{std::string(rule_name(f->rule)), key.first, key.second, o.step}] = *f;
            }
        }
    }

    std::string only_console, only_computed, value_mismatch;
    int n_only_console = 0, n_only_computed = 0, n_value_mismatch = 0;
    for (const auto& [sig, c] : console) {
        auto it = computed.find(sig);
        if (it == computed.end()) {
            ++n_only_console;
            only_console += "  " + describe(sig) + "\n";
            continue;
        }
        // The CSV holds round(x, 16); the EMA is a convex mix of |x|, so both the value and the history may
        // differ from the console's by at most 0.5e-16 (plus the last-bit noise of the arithmetic).
        const MsprobeFinding& f = it->second;
        auto close = [](double a, double b) {
            return same(a, b) || std::fabs(a - b) <= 0.5e-16 + 1e-15 * std::fabs(b);
        };
        if (!close(f.value, c.value) || !close(f.history, c.history)) {
            ++n_value_mismatch;
            std::ostringstream os;
            os.precision(17);
            os << "  " << describe(sig) << ": value " << f.value << " vs " << c.value << ", history " << f.history
               << " vs " << c.history << "\n";
            value_mismatch += os.str();
        }
    }
    for (const auto& [sig, f] : computed) {
        if (!console.count(sig)) {
            ++n_only_computed;
            only_computed += "  " + describe(sig) + "\n";
        }
    }
    EXPECT_EQ(computed.size(), console.size());
    EXPECT_EQ(n_only_console, 0) << "printed by msprobe, not computed from the CSVs:\n" << only_console;
    EXPECT_EQ(n_only_computed, 0) << "computed from the CSVs, not printed by msprobe:\n" << only_computed;
    EXPECT_EQ(n_value_mismatch, 0) << "value/history differ from the console by more than CSV rounding:\n"
                                   << value_mismatch;
}

struct DumpEntry {
    std::string key;
    AnalyserKey order;
    std::int64_t step = 0;
};

std::vector<DumpEntry> load_dump(const std::string& path) {
    // ordered_json keeps the file's key order, which is the input order Python's stable sort preserves for
    // ties.
    const auto j = nlohmann::ordered_json::parse(test::read_file(path));
    std::vector<DumpEntry> out;
    for (const auto& [k, v] : j.items()) {
        DumpEntry e;
        e.key = k;
        e.order = AnalyserKey{v.at("step").get<std::int64_t>(),     v.at("micro_step").get<std::int64_t>(),
                              v.at("tag_name").get<std::string>(),  v.at("vpp_stage").get<std::int64_t>(),
                              v.at("pp_stage").get<std::int64_t>(), v.at("call_id").get<std::int64_t>()};
        e.step = e.order.step;
        out.push_back(std::move(e));
    }
    return out;
}

std::vector<std::string> keys_of(const std::string& path) {
    std::vector<std::string> keys;
    const auto j = nlohmann::ordered_json::parse(test::read_file(path));  // named: items() must not outlive it
    for (const auto& [k, v] : j.items()) keys.push_back(k);
    return keys;
}

// AnomalyAnalyse.get_range_top_k: sorted() if k >= n else heapq.nsmallest(k) — both equal a stable sort's
// first k.
std::vector<std::string> top_k(std::vector<DumpEntry> entries, std::size_t k, const std::set<std::int64_t>& steps) {
    if (!steps.empty()) {
        std::erase_if(entries, [&](const DumpEntry& e) { return !steps.count(e.step); });
    }
    std::stable_sort(entries.begin(), entries.end(),
                     [](const DumpEntry& a, const DumpEntry& b) { return msprobe_analyser_less(a.order, b.order); });
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < entries.size() && i < k; ++i) keys.push_back(entries[i].key);
    return keys;
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += "  " + x + "\n";
    return s;
}

TEST(MsprobeFixtureAlert, analyser_order_reproduces_anomaly_processor_top_k) {
    const std::string dir = alert_fixture_dir();
    if (dir.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: no msprobe-real alert fixture");
    const auto entries = load_dump(dir + "/monitor_output/anomaly_detected/rank0/anomaly.json");
    ASSERT_EQ(entries.size(), 771u);

    const auto want8 = keys_of(dir + "/monitor_output/anomaly_detected/anomaly_analyse.json");
    ASSERT_EQ(want8.size(), 8u);
    const auto got8 = top_k(entries, 8, {});
    EXPECT_EQ(got8, want8) << "got:\n" << joined(got8) << "want:\n" << joined(want8);

    const auto want20 = keys_of(dir + "/anomaly_analyse_steps_12_20_top20/anomaly_analyse.json");
    ASSERT_EQ(want20.size(), 20u);
    const auto got20 = top_k(entries, 20, {12, 20});
    EXPECT_EQ(got20, want20) << "got:\n" << joined(got20) << "want:\n" << joined(want20);
}

}  // namespace
}  // namespace msmon
