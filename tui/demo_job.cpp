// The demo job: a temporary folder the simulator writes into until msmon-tui ends.
#include "tui/demo_job.hpp"

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/config/config_file.hpp"
#include "core/files/background_removal.hpp"
#include "core/sim/mindformers_simulator.hpp"
#include "core/sim/msprobe_simulator.hpp"
#include "core/text/display_escape.hpp"

namespace msmon::tui {

namespace {

// The demo job's monitor config: no alert rules, as most jobs run (msprobe's turbulence rule fires on every mean
// near zero); msmon's own detectors find the planted events.
constexpr const char* kDemoMonitorConfig =
    R"({"targets": {}, "xy_distribution": true, "wg_distribution": true, "mv_distribution": true,
 "param_distribution": true, "format": "csv",
 "ops": ["min", "max", "norm", "mean", "nans", "zeros"]})";

// The demo's planted routing collapse (the Experts tab flags it): from this step on, layer_1's expert 3 takes most
// tokens. Early, so that the tab has something to show within seconds.
constexpr std::int64_t kDemoCollapseStep = 10;

}  // namespace

bool DemoJob::start(LaunchOptions& o, std::string& error) {
    std::string tmpl = std::filesystem::temp_directory_path().string() + "/msmon-demo-XXXXXX";
    if (!::mkdtemp(tmpl.data())) {
        error = "cannot create a demo folder";
        return false;
    }
    dir_ = tmpl;
    o.dir = dir_ + "/job";
    if (o.db.empty()) o.db = dir_ + "/store.db";
    std::filesystem::create_directories(o.dir);
    o.monitor_config = kDemoMonitorConfig;
    // The demo's monitor config, as a job would have it on disk: the Config tab edits it.
    if (o.config_path.empty()) {
        o.config_path = dir_ + "/monitor_config.json";
        std::string werr;
        auto doc = nlohmann::ordered_json::parse(kDemoMonitorConfig);
        doc["dynamic_on"] = false;
        doc["collect_times"] = 100;
        write_monitor_config(o.config_path, doc, werr);
    }
    writer_ = std::thread([this, dir = o.dir, step_ms = o.demo_step_ms] {
        SimOptions s;
        s.outdir = dir;
        s.ranks = 8;
        s.params = 16;
        s.activations = true;  // xy_distribution: a NaN's origin is named down to the module
        s.steps = 100000;
        s.step_ms = step_ms;
        std::string err;
        // A NaN stays once it is in the weights: the job is relaunched from the checkpoint before it.
        s.faults = *parse_fault_list("spike@20,nan@35:r3,restart@40", err);
        // MindFormers logs, the health file and TensorBoard event files beside msprobe's output, as a real
        // job writes them; the event files carry MoE expert load whose router collapses onto one expert.
        MindFormersOptions mf;
        mf.logs = true;
        mf.health = true;
        mf.tensorboard = true;
        mf.collapse_step = kDemoCollapseStep;
        mf.stop_on_spikes = false;  // the demo keeps running after its spike
        const MindFormersPlan plan = plan_mindformers_run(s, mf);
        MindFormersResult mf_result;
        std::string mf_err;
        std::thread logs([&] { run_mindformers_simulation(s, mf, plan, stop_, mf_result, mf_err); });
        SimResult result;
        run_msprobe_simulation(msprobe_options_for(s, plan), stop_, result, err);
        logs.join();
    });
    return true;
}

DemoJob::~DemoJob() {
    stop_.store(true);
    if (writer_.joinable()) writer_.join();
    if (dir_.empty()) return;
    // After a long demo the folder holds a gigabyte in 100k files: removed in the background, so that the shell
    // prompt comes back at once (the terminal is restored by then).
    if (remove_tree_in_background(dir_)) {
        std::fprintf(stderr, "msmon-tui: removing the demo folder %s in the background\n",
                     escape_for_terminal(dir_).c_str());
    } else {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
}

}  // namespace msmon::tui
