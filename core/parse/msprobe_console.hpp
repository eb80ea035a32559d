// msprobe's alerts as its trainer prints them (alert.dump false, the default, leaves nothing else), found in the
// job's logs: MindFormers' worker logs carry the trainer's stdout.
//   2025-12-03 21:35:02 (48213) [rank 0] [INFO] \x1b[93m> Rule AnomalyTurbulence reports anomaly signal in
//   ('0:...weight/rank0/post_grad', 'norm') at step 7, current value 4.18, history mean 1.98.\x1b[0m
#pragma once

#include <optional>
#include <string_view>

#include "core/model/anomaly_record.hpp"

namespace msmon {

// The dump key of an alert read from a console line (a dump's keys are "<tag>_step_<s>_call_<id>"). The store
// keeps one row per alert: a dump entry of the same alert takes the console row's place.
inline constexpr std::string_view kConsoleAlertKey = "console";

// Whether the line may hold one (a cheap test before the parse).
bool may_hold_msprobe_alert(std::string_view line);

// The alert on the line as a msprobe anomaly (source msprobe, key kConsoleAlertKey, rank, kind and name from the
// tag, micro_step 0 as the dump says), or nullopt. The colour escapes and the logger's prefix are not kept.
std::optional<AnomalyRecord> parse_msprobe_console_line(std::string_view line);

}  // namespace msmon
