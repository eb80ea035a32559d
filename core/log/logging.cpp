// spdlog: a rotating file sink under the XDG state folder; the CLI also prints errors to stderr.
#include "core/log/logging.hpp"

#include <pwd.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "core/text/display_escape.hpp"

namespace msmon {

namespace {

#ifdef MSMON_NO_NSS
// A static build loads no NSS module: the passwd database is /etc/passwd as the file says (users only in LDAP or
// SSSD are not in it: they need HOME, which their login sets).
std::string passwd_home(uid_t uid) {
    std::ifstream in("/etc/passwd");
    for (std::string line; std::getline(in, line);) {
        // name:password:uid:gid:gecos:home:shell
        std::vector<std::string> f;
        std::stringstream fields(line);
        for (std::string part; std::getline(fields, part, ':');) f.push_back(part);
        if (f.size() >= 6 && f[2] == std::to_string(uid)) return f[5];
    }
    return {};
}
#else
std::string passwd_home(uid_t uid) {
    std::vector<char> buf(16384);
    passwd pw{};
    passwd* found = nullptr;
    if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found && found->pw_dir) return found->pw_dir;
    return {};
}
#endif

// The user's home: $HOME, else the passwd entry's (a systemd system service runs with neither HOME nor XDG_*).
// Never a shared folder such as /tmp, where another user could plant a link where msmon writes its log or store.
std::string user_home() {
    if (const char* home = std::getenv("HOME"); home && *home == '/') return home;
    if (const std::string home = passwd_home(::geteuid()); !home.empty() && home[0] == '/') return home;
    throw std::runtime_error("no home folder: HOME is not set and user " + std::to_string(::geteuid()) +
                             " has no home in the passwd database; set HOME, XDG_STATE_HOME and XDG_CACHE_HOME, "
                             "or give --db");
}

std::string xdg_dir(const char* var, const char* fallback_under_home) {
    std::string base;
    if (const char* v = std::getenv(var); v && *v == '/') base = v;
    else base = user_home() + "/" + fallback_under_home;
    std::string dir = base + "/msmon";
    make_dirs(dir);
    return dir;
}

// Every message is escaped before any sink sees it: log lines name files and quote their lines, and nothing from a
// file may reach a terminal (stderr, or `tail -f msmon.log`) raw; one message stays one line.
class EscapingSink final : public spdlog::sinks::sink {
public:
    explicit EscapingSink(spdlog::sink_ptr inner) : inner_(std::move(inner)) {}
    void log(const spdlog::details::log_msg& msg) override {
        const std::string text = escape_for_display(std::string_view(msg.payload.data(), msg.payload.size()));
        spdlog::details::log_msg copy = msg;
        copy.payload = spdlog::string_view_t(text.data(), text.size());
        inner_->log(copy);
    }
    void flush() override { inner_->flush(); }
    void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
    void set_formatter(std::unique_ptr<spdlog::formatter> f) override { inner_->set_formatter(std::move(f)); }

private:
    spdlog::sink_ptr inner_;
};

}  // namespace

std::string home_dir() {
    return user_home();
}

bool make_dirs(const std::string& path) {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    return !ec || std::filesystem::is_directory(path);
}

std::string config_dir() {
    if (const char* v = std::getenv("XDG_CONFIG_HOME"); v && *v == '/') return std::string(v) + "/msmon";
    return home_dir() + "/.config/msmon";
}

std::string state_dir() {
    return xdg_dir("XDG_STATE_HOME", ".local/state");
}
std::string cache_dir() {
    return xdg_dir("XDG_CACHE_HOME", ".cache");
}

void init_logging(const std::string& program, bool stderr_errors) {
    std::vector<spdlog::sink_ptr> sinks;
    try {
        sinks.push_back(std::make_shared<EscapingSink>(std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
            state_dir() + "/" + program + ".log", 10 * 1024 * 1024, 3)));
    } catch (const spdlog::spdlog_ex&) {
        // An unwritable state folder must not stop monitoring; errors still reach stderr below.
    } catch (const std::runtime_error& e) {
        std::fprintf(stderr, "msmon: no log file: %s\n", e.what());  // no home: monitoring goes on, unlogged
    }
    if (stderr_errors) {
        auto err = std::make_shared<EscapingSink>(std::make_shared<spdlog::sinks::stderr_sink_mt>());
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
