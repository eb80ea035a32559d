// Read commands accept the monitored folder itself: the answer then reflects what is on disk now.
#include "cli/store_target.hpp"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include "store/clickhouse/clickhouse_reader.hpp"
#include "store/derived_reader.hpp"
#include "store/job_reader.hpp"

namespace msmon {

std::unique_ptr<Reader> open_target_reader(const ParsedArgs& args, std::string& error, bool& usage) {
    usage = false;
    const auto db = args.value("--db");
    if (const auto store = args.value("--store")) {
        if (db || !args.positional.empty()) {
            usage = true;
            error = "give one of DIR, --db PATH, --store URL";
            return nullptr;
        }
        const auto target = parse_clickhouse_url(*store, error);
        if (!target) {
            usage = true;
            return nullptr;
        }
        try {
            return with_derived_kinds(open_clickhouse_reader(*target, args.value("--job").value_or("")));
        } catch (const std::exception& e) {
            error = e.what();
            return nullptr;
        }
    }
    if (args.has("--job")) {
        usage = true;
        error = "--job goes with --store";
        return nullptr;
    }
    if (db && !args.positional.empty()) {
        usage = true;
        error = "give either DIR or --db PATH, not both";
        return nullptr;
    }
    if (!db && args.positional.size() != 1) {
        usage = true;
        error = "give the monitored folder (DIR) or --db PATH";
        return nullptr;
    }
    const StoreAccess access{args.has(kTrustDbFolderOption)};
    if (!db) return open_job_folder(args.positional.front(), error, access);
    struct stat st {};
    if (::stat(db->c_str(), &st) != 0) {
        error = "no store at '" + *db + "'";
        return nullptr;
    }
    try {
        return with_derived_kinds(open_sqlite_reader(*db, access));
    } catch (const std::exception& e) {
        error = e.what();
        return nullptr;
    }
}

}  // namespace msmon
