// --demo: the built-in simulator writing a live job into a temporary folder — msprobe's CSVs with activations,
// MindFormers' logs, the health file and TensorBoard event files, with a spike, a NaN and a restart planted — and
// a monitor config there for the Config tab to edit.
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "tui/launch_options.hpp"

namespace msmon::tui {

class DemoJob {
public:
    DemoJob() = default;
    DemoJob(const DemoJob&) = delete;
    DemoJob& operator=(const DemoJob&) = delete;
    // Creates the folder and starts writing into it; points o.dir, o.db (unless given), o.monitor_config and
    // o.config_path (unless given) at it.
    bool start(LaunchOptions& o, std::string& error);
    // Stops the writers and removes the folder.
    ~DemoJob();

private:
    std::atomic<bool> stop_{false};
    std::thread writer_;
    std::string dir_;
};

}  // namespace msmon::tui
