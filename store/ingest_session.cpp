// One writer per store: the flock is taken before SQLite is opened for writing.
#include "store/ingest_session.hpp"

#include "core/log/logging.hpp"

namespace msmon {

std::unique_ptr<IngestSession> IngestSession::open(const std::string& store_path, IngestOptions options,
                                                   OpenStatus& status, std::string& error,
                                                   const std::string& ship_destination) {
    std::unique_ptr<IngestSession> s(new IngestSession());
    const auto slash = store_path.find_last_of('/');
    if (slash != std::string::npos && slash > 0) make_dirs(store_path.substr(0, slash));
    s->lock_ = std::make_unique<StoreWriterLock>(store_path);
    if (!s->lock_->held()) {
        status = OpenStatus::locked;
        error = "another msmon (" + s->lock_->holder() + ") is ingesting into " + store_path;
        return nullptr;
    }
    try {
        s->store_ = std::make_unique<SqliteIngestStore>(store_path, ship_destination);
    } catch (const std::exception& e) {
        status = OpenStatus::failed;
        error = e.what();
        return nullptr;
    }
    s->engine_ = std::make_unique<IngestEngine>(*s->store_, std::move(options));
    status = OpenStatus::ok;
    return s;
}

}  // namespace msmon
