// One writer per store: the flock is taken before SQLite is opened for writing.
#include "store/ingest_session.hpp"

namespace msmon {

std::unique_ptr<IngestSession> IngestSession::open(const std::string& store_path, IngestOptions options,
                                                   OpenStatus& status, std::string& error,
                                                   const std::string& ship_destination, const StoreAccess& access) {
    std::unique_ptr<IngestSession> s(new IngestSession());
    const auto real = resolve_store_path(store_path, access, true, error);
    if (!real) {
        status = OpenStatus::failed;
        return nullptr;
    }
    s->lock_ = std::make_unique<StoreWriterLock>(*real);
    if (!s->lock_->problem().empty()) {
        status = OpenStatus::failed;
        error = s->lock_->problem();
        return nullptr;
    }
    if (!s->lock_->held()) {
        status = OpenStatus::locked;
        error = "another msmon (" + s->lock_->holder() + ") is ingesting into " + store_path +
                (*real != store_path ? " (" + *real + ")" : "");
        return nullptr;
    }
    try {
        s->store_ = std::make_unique<SqliteIngestStore>(*real, ship_destination);
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
