// Helpers every way of running msmon-tui shares: the ClickHouse reader, a collect that survives a failing store,
// the locale's glyphs.
#include "tui/launch_options.hpp"

#include <langinfo.h>

#include <clocale>
#include <cstring>

#include "store/clickhouse/clickhouse_reader.hpp"
#include "store/derived_reader.hpp"

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

void collect_safely(App& app, std::string& failure) {
    try {
        app.collect();
        failure.clear();
    } catch (const std::exception& e) {
        failure = e.what();
    }
}

}  // namespace msmon::tui
