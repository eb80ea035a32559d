// What msmon-tui was started with: its arguments, parsed by tui/main.cpp through the same parser as the CLI.
#pragma once

#include <memory>
#include <string>

#include "store/reader.hpp"
#include "tui/app.hpp"

namespace msmon::tui {

struct LaunchOptions {
    std::string dir, db, snapshot, monitor_config, config_path, store, job;
    int width = 120, height = 40, poll_ms = 0, demo_step_ms = 500;
    bool demo = false;
    bool follow_config_link = false;  // --follow-config-link: the Config tab follows a link to the config
    StoreAccess store_access;         // --trust-db-folder
    // A new incident (while watching, not one of the backlog read at start): the bell, a desktop notification
    // through the terminal (tui/notification.hpp), and the user's command (core/notify/hook_runner.hpp).
    bool bell = true, desktop_notify = true;
    std::string on_incident;
    std::string baseline;                                   // a job folder or a store to compare with
    std::string x_axis = "step";                            // the Chart's x axis at start (settings)
    std::vector<std::pair<std::string, std::string>> keys;  // key overrides (settings), "chart:w" → "W"
    std::string settings_path;
    bool mono = false;            // the settings' theme "mono": no colours, as NO_COLOR
    std::string settings_notice;  // a problem in the settings file, for the status line
    int on_incident_timeout_ms = 20000;
    // No DIR, only --db: an existing store, shown as it is (nothing ingests, nothing is written).
    bool store_only() const { return dir.empty() && store.empty(); }
};

// The whole job from ClickHouse (--store): nothing to ingest here, the agents ship it. Null with `error` set.
std::unique_ptr<Reader> open_store_reader(const LaunchOptions& o, std::string& error);

// The app as the settings and flags ask: the Chart's x axis, key overrides (refusals on stderr and the status
// line), then --baseline (a job folder is read into its own store first, which may take a moment: said on stderr
// before the screen is taken). False with `error` when the baseline cannot be opened.
bool prepare_app(const LaunchOptions& o, App& app, std::string& error);

// Collects the model; a remote store that fails leaves the last frame up with the reason in `failure`.
void collect_safely(App& app, std::string& failure);

// Whether the locale is UTF-8 (Unicode glyphs) or not (ASCII).
bool utf8_locale();

// One frame of --snapshot VIEW printed as text; the exit code.
int run_snapshot(const LaunchOptions& o);

// The live UI until q or a signal; the exit code.
int run_live(const LaunchOptions& o);

}  // namespace msmon::tui
