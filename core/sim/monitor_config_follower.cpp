// msprobe's monitor config as TrainerMon follows it: see the header.
#include "core/sim/monitor_config_follower.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>

#include "core/config/monitor_config_fields.hpp"

namespace msmon {

namespace {

using json = nlohmann::ordered_json;

// load_json: open, flock(LOCK_SH), read everything.
bool load(const std::string& path, json& out) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ::flock(fd, LOCK_SH);
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
    ::flock(fd, LOCK_UN);
    ::close(fd);
    try {
        out = json::parse(text);
    } catch (const std::exception&) {
        return false;
    }
    return true;
}

bool mtime_of(const std::string& path, double& out) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return false;
    out = static_cast<double>(st.st_mtim.tv_sec) + static_cast<double>(st.st_mtim.tv_nsec) * 1e-9;
    return true;
}

std::int64_t int_or(const json& config, const char* key, std::int64_t fallback, std::int64_t min) {
    const auto it = config.find(key);
    if (it == config.end() || !it->is_number_integer() || it->get<std::int64_t>() < min) return fallback;
    return it->get<std::int64_t>();
}

// Python's truthiness of a JSON value (config.get("dynamic_on", False)).
bool truthy(const json& v) {
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number()) return v.get<double>() != 0;
    if (v.is_string() || v.is_array() || v.is_object()) return !v.empty();
    return false;
}

}  // namespace

MonitorConfigFollower::MonitorConfigFollower(std::string path, bool dynamic)
    : path_(std::move(path)), dynamic_(dynamic) {
    if (dynamic_) return;  // config_timestamp 0: the first poll reads the file
    json config;
    if (!load(path_, config) || !config.is_object()) return;
    start(config, int_or(config, "start_step", 0, 0));
}

bool MonitorConfigFollower::dynamic_mode_from_env() {
    const char* v = std::getenv("DYNAMIC_MONITOR");
    if (!v) return false;
    std::string s(v);
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s == "true";
}

void MonitorConfigFollower::start(const json& config, std::int64_t first_step) {
    collect_times_ = int_or(config, "collect_times", 100000000, 0);
    step_interval_ = int_or(config, "step_interval", 1, 1);
    start_step_ = first_step;
    has_collect_times_ = 0;
    monitoring_ = true;
}

bool MonitorConfigFollower::collects(std::int64_t step) {
    if (!monitoring_ || step < start_step_ || (step - start_step_) % step_interval_ != 0) return false;
    ++has_collect_times_;
    return true;
}

void MonitorConfigFollower::finish_step(std::int64_t step) {
    last_event_.clear();
    if (monitoring_ && has_collect_times_ >= collect_times_) {
        monitoring_ = false;  // _remove_all_hooks_final
        if (dynamic_) write_back();
    }
    if (dynamic_) poll(step + 1);
}

void MonitorConfigFollower::poll(std::int64_t next_step) {
    double mtime = 0;
    if (!mtime_of(path_, mtime) || mtime == config_timestamp_) return;
    config_timestamp_ = mtime;  // stored before parsing
    json config;
    if (!load(path_, config) || !config.is_object() || !truthy(config.value("dynamic_on", json(false)))) return;
    if (!validate_monitor_config(config).ok()) return;
    start(config, next_step);
    last_event_ =
        "reload at step " + std::to_string(next_step) + " (collect_times " + std::to_string(collect_times_) + ")";
}

void MonitorConfigFollower::write_back() {
    json config;
    if (!load(path_, config) || !config.is_object()) return;
    config["dynamic_on"] = false;
    const std::string text = config.dump(2, ' ', true);  // indent 2, ensure_ascii, no trailing newline
    const int fd = ::open(path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);  // in place, as save_json's open("w")
    if (fd < 0) return;
    ::flock(fd, LOCK_EX);
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
    }
    ::flock(fd, LOCK_UN);
    ::close(fd);
    mtime_of(path_, config_timestamp_);  // its own write does not trigger a reload
    last_event_ = "write-back";
}

}  // namespace msmon
