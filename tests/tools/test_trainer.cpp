// A stand-in for one msprobe monitoring rank in dynamic mode (DYNAMIC_MONITOR=True), following spec
// msprobe's dynamic mode and its write-back exactly, for the config editor's race tests:
//   * every step: stat the config, compare st_mtime as a float exactly, store it BEFORE parsing, load (flock SH),
//     and when dynamic_on is true and the config validates: reset the count, start at the next step;
//   * count collected steps (start_step, step_interval), and after `collect_times` of them write the config back:
//     re-read the current file, dynamic_on = false, rewrite IN PLACE (truncate, flock EX, indent 2, no trailing
//     newline), then record getmtime() so its own write does not trigger a reload.
// It logs one line per event to LOG. Every invalid read records whether some rank's write-back overlapped it,
// through two counters shared by all ranks (COUNTERS, a 16-byte file): writes started / writes finished.
//
// usage: msmon_test_trainer CONFIG LOG COUNTERS RANK STEP_MS STEPS [PAUSE_FILE]
//   PAUSE_FILE: when it exists and holds a number, this rank sleeps that many ms between reading the file and
//   rewriting it (a slow rank), which opens the lost-update window of the write-back wide enough for a test to hit it
//   on purpose. msprobe's own gap is a few milliseconds.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "core/config/monitor_config_fields.hpp"

namespace {

using json = nlohmann::ordered_json;

std::FILE* g_log = nullptr;
std::atomic<unsigned long long>* g_started = nullptr;
std::atomic<unsigned long long>* g_finished = nullptr;

long long now_ns() {
    timespec t{};
    ::clock_gettime(CLOCK_REALTIME, &t);
    return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

void log_event(const char* event, long long step, const timespec& mtime, const std::string& extra) {
    std::fprintf(g_log, "%lld\t%s\t%lld\t%lld\t%ld\t%s\n", now_ns(), event, step, static_cast<long long>(mtime.tv_sec),
                 mtime.tv_nsec, extra.c_str());
    std::fflush(g_log);
}

// load_json: open, flock(LOCK_SH), read everything.
bool load_text(const std::string& path, std::string& text) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ::flock(fd, LOCK_SH);
    text.clear();
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
    ::flock(fd, LOCK_UN);
    ::close(fd);
    return true;
}

// save_json(indent=2): open "w" (truncates BEFORE the lock), flock(LOCK_EX), dump, unlock, close. Written in two
// halves so that concurrent readers really can catch a partial file, as they can with Python's buffered writes.
void save_text(const std::string& path, const std::string& text) {
    g_started->fetch_add(1);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        ::flock(fd, LOCK_EX);
        const std::size_t half = text.size() / 2;
        [[maybe_unused]] auto a = ::write(fd, text.data(), half);
        // paces the input: 1 ms between the halves, in which a reader can catch the partial file
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        [[maybe_unused]] auto b = ::write(fd, text.data() + half, text.size() - half);
        ::flock(fd, LOCK_UN);
        ::close(fd);
    }
    g_finished->fetch_add(1);
}

double as_float(const timespec& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

bool is_int(const json& v) {
    return v.is_number_integer() || v.is_number_unsigned();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 7) {
        std::fprintf(stderr, "usage: msmon_test_trainer CONFIG LOG COUNTERS RANK STEP_MS STEPS [PAUSE_FILE]\n");
        return 2;
    }
    char resolved[PATH_MAX];
    const std::string path = ::realpath(argv[1], resolved) ? std::string(resolved) : std::string(argv[1]);
    g_log = std::fopen(argv[2], "a");
    const int cfd = ::open(argv[3], O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (!g_log || cfd < 0 || ::ftruncate(cfd, 16) != 0) return 1;
    void* shared = ::mmap(nullptr, 16, PROT_READ | PROT_WRITE, MAP_SHARED, cfd, 0);
    if (shared == MAP_FAILED) return 1;
    g_started = static_cast<std::atomic<unsigned long long>*>(shared);
    g_finished = g_started + 1;
    const int rank = std::atoi(argv[4]);
    const int step_ms = std::atoi(argv[5]);
    const long long steps = std::atoll(argv[6]);
    const std::string pause_file = argc > 7 ? argv[7] : "";

    double config_timestamp = 0;
    bool monitoring = false, in_module_ranks = true;
    long long has_collect_times = 0, collect_times = 100000000, step_interval = 1, start_step = 0;
    long long step = 0;
    for (long long i = 0; i < steps; ++i) {
        // paces the input: one training step (forward, backward, optimizer.step()) every STEP_MS
        std::this_thread::sleep_for(std::chrono::milliseconds(step_ms));
        // step_final_hook
        if (monitoring && in_module_ranks && step >= start_step && (step - start_step) % step_interval == 0) {
            ++has_collect_times;
            log_event("collect", step, {}, std::to_string(has_collect_times));
        }
        if (monitoring && has_collect_times >= collect_times) {
            monitoring = false;  // _remove_all_hooks_final
            log_event("finish_begin", step, {}, "");
            std::string text;
            json config;
            bool ok = load_text(path, text);
            if (ok) try {
                    config = json::parse(text);
                } catch (const std::exception&) {
                    ok = false;
                }
            if (ok && config.is_object()) {
                std::string pause;
                // paces the input: a slow rank's gap between reading the config and writing it back
                if (!pause_file.empty() && load_text(pause_file, pause) && std::atoi(pause.c_str()) > 0)
                    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(pause.c_str())));
                config["dynamic_on"] = false;
                save_text(path, config.dump(2));  // indent 2, no trailing newline
                struct stat st {};
                ::stat(path.c_str(), &st);
                config_timestamp = as_float(st.st_mtim);
                log_event("finish", step, st.st_mtim, "");
            } else {
                log_event("finish_failed", step, {}, "");
            }
        }
        ++step;
        // dynamic_monitor
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0) {
            log_event("stat_error", step, {}, std::strerror(errno));
            continue;
        }
        if (as_float(st.st_mtim) == config_timestamp) {
            log_event("poll", step, st.st_mtim, "");
            continue;
        }
        config_timestamp = as_float(st.st_mtim);  // stored before parsing
        const unsigned long long finished0 = g_finished->load(), started0 = g_started->load();
        std::string text;
        const bool opened = load_text(path, text);
        const unsigned long long started1 = g_started->load();
        json config;
        try {
            if (!opened) throw std::runtime_error("cannot open");
            config = json::parse(text);
        } catch (const std::exception& e) {
            const bool overlapped = started0 != finished0 || started1 != started0;
            log_event(
                "invalid_read", step, st.st_mtim,
                std::string(overlapped ? "writeback" : "NO-WRITEBACK") + "\t" + std::to_string(text.size()) + " bytes");
            continue;
        }
        if (!config.is_object()) {  // msprobe: config.get raises outside the try — the training step crashes
            log_event("crash_non_object", step, st.st_mtim, "");
            continue;
        }
        const auto on = config.find("dynamic_on");
        if (on == config.end() || !(on->is_boolean() ? on->get<bool>() : !on->is_null())) {
            log_event("seen_off", step, st.st_mtim, "");
            continue;
        }
        const msmon::ConfigCheck check = msmon::validate_monitor_config(config);
        if (!check.ok()) {
            log_event("rejected", step, st.st_mtim, check.errors[0]);
            continue;
        }
        const json ct = config.value("collect_times", json(100000000));
        collect_times = is_int(ct) && ct.get<long long>() >= 0 ? ct.get<long long>() : 100000000;
        const json si = config.value("step_interval", json(1));
        step_interval = is_int(si) && si.get<long long>() >= 1 ? si.get<long long>() : 1;
        in_module_ranks = true;
        if (const auto mr = config.find("module_ranks"); mr != config.end() && mr->is_array() && !mr->empty()) {
            in_module_ranks = false;
            for (const auto& r : *mr) in_module_ranks = in_module_ranks || (is_int(r) && r.get<long long>() == rank);
        }
        has_collect_times = 0;
        start_step = step;
        monitoring = true;
        log_event("reload", step, st.st_mtim, std::to_string(collect_times) + "\t" + config.dump());
    }
    return 0;
}
