// A real msprobe run written again, live, as its job wrote it: each rank's CSVs of a step appear at that step's time,
// with the collections, pauses between them, ranks lagging behind and ranks that stop that a test asks for. What
// msprobe writes once (module_struct, the rank folders) is there before the first step.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace msmon::test {

// msprobe's dynamic collection writes steps first-last, then nothing until it is turned on again.
struct Collection {
    std::int64_t first = 0, last = 0;
    std::chrono::milliseconds pause_before{0};  // since the previous collection's last step
};

struct ReplayPlan {
    std::vector<Collection> collections;           // in order
    std::chrono::milliseconds step_time{200};      // between two steps of a collection
    std::map<int, std::chrono::milliseconds> lag;  // rank → written this much after the others
    std::map<int, std::int64_t> last_step;         // rank → the last step it writes (it stops)
    // msprobe's monitor config in dynamic mode (DYNAMIC_MONITOR=True): each rank follows it as TrainerMon does
    // (core/sim/monitor_config_follower) and writes only the steps it collects, writing dynamic_on false back.
    std::string dynamic_config;
    // Which of a step's files are written (a kind collected only from some step on); none: all.
    std::function<bool(const std::string& file_name, std::int64_t step)> keep;
};

// Writes `source_output` (a monitor_output folder of rank folders) into `target_output` along `plan`; returns when
// the last file is written.
void replay_msprobe_run(const std::string& source_output, const std::string& target_output, const ReplayPlan& plan);

}  // namespace msmon::test
