// A job folder or a store file, opened for reading.
#include "store/job_reader.hpp"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include "store/derived_reader.hpp"
#include "store/ingest_session.hpp"
#include "store/store_location.hpp"

namespace msmon {

namespace {

std::unique_ptr<Reader> open_store_file(const std::string& path, std::string& error, const StoreAccess& access) {
    try {
        return with_derived_kinds(open_sqlite_reader(path, access));
    } catch (const std::exception& e) {
        error = e.what();
        return nullptr;
    }
}

}  // namespace

std::unique_ptr<Reader> open_job_folder(const std::string& dir, std::string& error, const StoreAccess& access) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        error = "'" + dir + "' is not a folder";
        return nullptr;
    }
    const std::string path = default_store_path({dir});
    IngestOptions options;
    options.roots = {dir};
    IngestSession::OpenStatus status;
    auto session = IngestSession::open(path, options, status, error, "", access);
    if (session) {
        if (!session->engine().run(error)) return nullptr;
    } else if (status == IngestSession::OpenStatus::locked) {
        spdlog::info("{}; reading the store as it is", error);
    } else {
        return nullptr;
    }
    return open_store_file(path, error, access);
}

std::unique_ptr<Reader> open_job_or_store(const std::string& path, std::string& error, const StoreAccess& access) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        error = "no job folder or store at '" + path + "'";
        return nullptr;
    }
    if (S_ISDIR(st.st_mode)) return open_job_folder(path, error, access);
    return open_store_file(path, error, access);
}

}  // namespace msmon
