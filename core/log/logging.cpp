// spdlog: a rotating file sink under the XDG state folder; the CLI also prints errors to stderr.
#include "core/log/logging.hpp"

#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>

namespace msmon {

namespace {

std::string xdg_dir(const char* var, const char* fallback_under_home) {
    std::string base;
    if (const char* v = std::getenv(var); v && *v == '/') {
        base = v;
    } else {
        const char* home = std::getenv("HOME");
        base = std::string(home && *home ? home : "/tmp") + "/" + fallback_under_home;
    }
    std::string dir = base + "/msmon";
    make_dirs(dir);
    return dir;
}

}  // namespace

bool make_dirs(const std::string& path) {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    return !ec || std::filesystem::is_directory(path);
}

std::string state_dir() { return xdg_dir("XDG_STATE_HOME", ".local/state"); }
std::string cache_dir() { return xdg_dir("XDG_CACHE_HOME", ".cache"); }

void init_logging(const std::string& program, bool stderr_errors) {
    std::vector<spdlog::sink_ptr> sinks;
    try {
        sinks.push_back(std::make_shared<spdlog::sinks::rotating_file_sink_mt>(state_dir() + "/" + program + ".log",
                                                                              10 * 1024 * 1024, 3));
    } catch (const spdlog::spdlog_ex&) {
        // An unwritable state folder must not stop monitoring; errors still reach stderr below.
    }
    if (stderr_errors) {
        auto err = std::make_shared<spdlog::sinks::stderr_sink_mt>();
        err->set_level(spdlog::level::err);
        err->set_pattern("msmon: %v");
        sinks.push_back(err);
    }
    auto logger = std::make_shared<spdlog::logger>(program, sinks.begin(), sinks.end());
    logger->set_level(spdlog::level::info);
    logger->flush_on(spdlog::level::warn);
    spdlog::set_default_logger(logger);
    spdlog::flush_every(std::chrono::seconds(2));
}

}  // namespace msmon
