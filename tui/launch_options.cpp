// Helpers every way of running msmon-tui shares: the ClickHouse reader, a collect that survives a failing store,
// the locale's glyphs.
#include "tui/launch_options.hpp"

#include <langinfo.h>

#include <clocale>
#include <cstdio>
#include <cstring>

#include "core/text/display_escape.hpp"
#include "store/clickhouse/clickhouse_reader.hpp"
#include "store/derived_reader.hpp"
#include "store/job_reader.hpp"

namespace msmon::tui {

bool utf8_locale() {
    std::setlocale(LC_ALL, "");
    const char* cs = nl_langinfo(CODESET);
    return cs && (std::strcmp(cs, "UTF-8") == 0 || std::strcmp(cs, "utf8") == 0);
}

std::unique_ptr<Reader> open_store_reader(const LaunchOptions& o, std::string& error) {
    const auto target = parse_clickhouse_url(o.store, error);
    if (!target) return nullptr;
    try {
        return with_derived_kinds(open_clickhouse_reader(*target, o.job));
    } catch (const std::exception& e) {
        error = e.what();
        return nullptr;
    }
}

bool prepare_app(const LaunchOptions& o, App& app, std::string& error) {
    app.set_x_axis(o.x_axis);
    app.set_store_access(o.store_access);
    for (const std::string& e : app.override_keys(o.keys)) {
        std::fprintf(stderr, "msmon-tui: settings: %s: %s\n", escape_for_terminal(o.settings_path).c_str(),
                     escape_for_terminal(e).c_str());
        app.status().notice = "settings: " + e;
    }
    if (o.baseline.empty()) return true;
    std::fprintf(stderr, "msmon-tui: reading the baseline %s\n", escape_for_terminal(o.baseline).c_str());
    auto other = open_job_or_store(o.baseline, error, o.store_access);
    if (!other) {
        error = "--baseline: " + error;
        return false;
    }
    app.set_baseline(std::move(other), o.baseline);
    return true;
}

void collect_safely(App& app, std::string& failure) {
    try {
        app.collect();
        failure.clear();
    } catch (const std::exception& e) {
        failure = e.what();
    }
}

}  // namespace msmon::tui
