// Where msmon keeps its log and cache, and the spdlog setup for both programs.
#pragma once

#include <string>

namespace msmon {

// The user's home: $HOME, else the passwd entry's; throws std::runtime_error when there is neither.
std::string home_dir();
// $XDG_STATE_HOME/msmon (else ~/.local/state/msmon), created if missing. ~ is $HOME, else the passwd entry's home;
// with neither, these throw std::runtime_error saying so (never a shared fallback such as /tmp).
std::string state_dir();
// $XDG_CACHE_HOME/msmon (else ~/.cache/msmon), created if missing.
std::string cache_dir();
// $XDG_CONFIG_HOME/msmon (else ~/.config/msmon), where msmon's own settings are; not created (msmon only reads it).
std::string config_dir();

// Logs to <state_dir>/<program>.log (rotating). When `stderr_errors`, errors are also printed to stderr.
void init_logging(const std::string& program, bool stderr_errors);

// Creates a folder and its parents; false on failure.
bool make_dirs(const std::string& path);

}  // namespace msmon
