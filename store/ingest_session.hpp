// An ingest run bound to one store: the writer lock, the SQLite store and the engine, in that order.
#pragma once

#include <memory>
#include <string>

#include "core/ingest/ingest_engine.hpp"
#include "store/sqlite_ingest_store.hpp"
#include "store/store_location.hpp"

namespace msmon {

class IngestSession {
public:
    enum class OpenStatus { ok, locked, failed };
    // Resolves and checks the store's path (resolve_store_path), takes its writer lock and opens (creating if
    // needed) the store; with `ship_destination`, as a spool for it (store/ship_spool.hpp).
    static std::unique_ptr<IngestSession> open(const std::string& store_path, IngestOptions options, OpenStatus& status,
                                               std::string& error, const std::string& ship_destination = "",
                                               const StoreAccess& access = {});

    IngestEngine& engine() { return *engine_; }

private:
    IngestSession() = default;
    std::unique_ptr<StoreWriterLock> lock_;
    std::unique_ptr<SqliteIngestStore> store_;
    std::unique_ptr<IngestEngine> engine_;
};

}  // namespace msmon
