// Files that producers rewrite whole: msprobe's anomaly.json / anomaly_analyse.json / module_struct.json and
// MindFormers' health_ckpts.json. A read of an empty or cut file is "being written", not an error.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/anomaly_record.hpp"
#include "core/model/record_batch.hpp"

namespace msmon {

enum class ParseOutcome { ok, incomplete, invalid };

// msprobe anomaly dump (anomaly.json or anomaly_analyse.json): one record per key, in file order.
ParseOutcome parse_anomaly_dump(std::string_view text, std::vector<AnomalyRecord>& out, std::string& error);

// The fields msprobe's message carries: "Rule R reports anomaly signal in ('TAG', 'OP') at step N, current value V,
// history mean H."
// Both forms: the current one ("..., current value V, history mean H.") and the earlier one, which ends at the
// step and so says no value (NaN) and no history mean (nullopt).
struct MsprobeMessage {
    std::string rule, tag, op;
    std::int64_t step = 0;
    double value = std::numeric_limits<double>::quiet_NaN();
    std::optional<double> history;
};
std::optional<MsprobeMessage> parse_msprobe_message(std::string_view message);

// Splits a msprobe tag "<vpp>:<name>[:<micro>]/rank<r>/<task>" into the CSV identity (kind from the task).
struct MsprobeTag {
    std::string vpp_stage, name, kind;
    std::optional<std::int64_t> micro_step;
    int rank = 0;
};
std::optional<MsprobeTag> split_msprobe_tag(std::string_view tag);

// health_ckpts.json: [{"is_health": 0|1, "ckpt_name": "..."}...]; names decoded with the CKPTNAME grammar.
ParseOutcome parse_health_checkpoints(std::string_view text, const std::string& source_path,
                                      std::vector<CheckpointRecord>& out, std::string& error);

// <prefix>_rank_<R>[_<N>]-<E>_<S>.<ckpt|safetensors>
struct CheckpointName {
    std::string prefix;
    int rank = 0;
    std::int64_t times = 0, epoch = 0, step_in_epoch = 0;
};
std::optional<CheckpointName> parse_checkpoint_name(std::string_view name);

// module_struct.json: {"<vpp>:<module>": {...}} → one entry per module with its JSON text.
ParseOutcome parse_module_struct(std::string_view text, int rank, std::vector<ModuleStructEntry>& out,
                                 std::string& error);

}  // namespace msmon
