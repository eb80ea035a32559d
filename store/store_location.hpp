// Where a monitored folder's store lives, which stores msmon trusts, and the lock that keeps one writer per store.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace msmon {

// $XDG_CACHE_HOME/msmon/<hash of the canonical monitored folders>.db: node-local, never in the training dir.
std::string default_store_path(const std::vector<std::string>& monitored_dirs);

// What msmon trusts around a store. By default, nobody but you and root may be able to change its folder: whoever
// can write there can plant its companion files (-wal, -shm, the lock) as links or with crafted content.
struct StoreAccess {
    bool trust_folder = false;  // --trust-db-folder: the user vouches for everyone who can write the folder
};
inline constexpr const char* kTrustDbFolderOption = "--trust-db-folder";

// The store's real path (folders and name, no link in it), for everything that opens it: links you or root own
// are followed (with trust_folder, any), the folder is checked (core/files/folder_trust.hpp). A writer
// (`create_folder`) makes missing folders first. nullopt with `error`: which folder or link, why, and the fix.
std::optional<std::string> resolve_store_path(const std::string& path, const StoreAccess& access, bool create_folder,
                                              std::string& error);

// "<real store path>.lock": two names of one store share it.
std::string store_lock_path(const std::string& real_store_path);

// An exclusive flock on the store's lock file, held for the life of the object. The lock file is made new
// (O_EXCL) or opened as it is, never through a link, and used only when it is a plain file with one name.
class StoreWriterLock {
public:
    explicit StoreWriterLock(const std::string& real_store_path);
    ~StoreWriterLock();
    StoreWriterLock(const StoreWriterLock&) = delete;
    StoreWriterLock& operator=(const StoreWriterLock&) = delete;
    bool held() const { return held_; }
    // When not held because another process holds it: who ("pid 1234"), if known.
    const std::string& holder() const { return holder_; }
    // When not held because the lock file cannot be used (a read-only folder, a planted link): why. Empty otherwise.
    const std::string& problem() const { return problem_; }

private:
    int fd_ = -1;
    bool held_ = false;
    std::string holder_, problem_;
};

}  // namespace msmon
