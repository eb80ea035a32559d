// msprobe's own anomaly rules, reproduced exactly (its history mean and
// its AnomalyTurbulence and AnomalyNan rules), so msmon can flag
// what the trainer's alerting would have flagged — or would flag — from the CSVs alone.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/detect/rules.hpp"

namespace msmon {

struct MsprobeRule {
    enum class Type { turbulence, nan } type = Type::turbulence;
    std::optional<double> threshold;  // turbulence: required; nan: optional
};

// The `alert.rules` of a monitor config, validated like msprobe's validate_alert (rules it would skip are
// skipped, with the reason in `warnings`).
struct MsprobeAlertRules {
    std::vector<MsprobeRule> rules;  // config order: the first rule that fires wins
    bool dump = false;
    std::vector<std::string> warnings;
    static std::optional<MsprobeAlertRules> from_config(const nlohmann::json& config, std::string& error);
};

// msprobe's internal tag for a CSV series: "<vpp>:<name>[:<micro>]/rank<r>/<task>" where task is msprobe's tag kind for
// the CSV prefix (grad_reduced → post_grad, grad_unreduced → acc_grad, actv → actv, ...).
std::string msprobe_tag_name(std::string_view kind, std::string_view vpp_stage, std::string_view name,
                             std::optional<std::int64_t> micro_step, int rank);

struct MsprobeFinding {
    Rule rule = Rule::AnomalyTurbulence;  // or Rule::AnomalyNan
    double value = 0;
    double history = 0;  // the EMA before this value
};

// The EMA history (β = 0.99 over |x|, seeded with the first |x|) of one (tag, op), and the rule scan.
class MsprobeSeriesState {
public:
    // Feeds one value, in step order; returns the rule that fires, exactly as msprobe's add_scalar would.
    std::optional<MsprobeFinding> observe(const MsprobeAlertRules& rules, std::string_view op, double value);
    bool seeded() const { return seeded_; }
    double average() const { return avg_; }
    void restore(double avg) {
        avg_ = avg;
        seeded_ = true;
    }

private:
    double avg_ = 0;
    bool seeded_ = false;
};

// msprobe's analyser order (anomaly_processor GradAnomalyData.__lt__, the order of anomaly_analyse.json):
// [step, micro_step, train_stage, ±vpp_stage, ±pp_stage, call_id], where train_stage comes from the tag's task.
struct AnalyserKey {
    std::int64_t step = 0;
    std::int64_t micro_step = 0;
    std::string tag_name;
    std::int64_t vpp_stage = 0;
    std::int64_t pp_stage = 0;
    std::int64_t call_id = 0;
};
int msprobe_train_stage(std::string_view tag_name);
bool msprobe_analyser_less(const AnalyserKey& a, const AnalyserKey& b);

}  // namespace msmon
