// msprobe's monitor config as TrainerMon follows it (static mode, dynamic mode, the
// write-back of `dynamic_on: false`), for the simulator
// and the tests' replays of real runs: which steps a rank collects.
// - Static mode (DYNAMIC_MONITOR unset): the file is read once, at start: collect_times steps from start_step,
//   step_interval apart.
// - Dynamic mode (DYNAMIC_MONITOR=True): nothing is collected until the file's mtime changes to a valid config with
//   dynamic_on truthy; each such reload restarts the count at the next step. After collect_times collected steps
//   (collect_times 0: one more), collection ends and dynamic_on false is written back, in place, indent 2.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace msmon {

class MonitorConfigFollower {
public:
    // `dynamic` as msprobe reads it: dynamic_mode_from_env().
    MonitorConfigFollower(std::string path, bool dynamic);
    static bool dynamic_mode_from_env();

    // step_final_hook of `step`: whether this step's statistics are written. Call once per step, in order, then
    // finish_step() after they are written.
    bool collects(std::int64_t step);
    // After the step's writes: collect_times reached ends the collection (dynamic mode: the write-back); then the
    // poll for the next step, `step + 1`.
    void finish_step(std::int64_t step);

    // What the last poll or write-back did, for a log line: "reload at step 12 (collect_times 3)", "write-back".
    const std::string& last_event() const { return last_event_; }

private:
    void start(const nlohmann::ordered_json& config, std::int64_t first_step);
    void poll(std::int64_t next_step);
    void write_back();

    std::string path_;
    bool dynamic_ = false;
    bool monitoring_ = false;
    double config_timestamp_ = 0;  // st_mtime as a float, compared exactly (msprobe: os.path.getmtime)
    std::int64_t collect_times_ = 100000000, step_interval_ = 1, start_step_ = 0, has_collect_times_ = 0;
    std::string last_event_;
};

}  // namespace msmon
