// Where a monitored folder's store lives, and the lock that keeps one writer per store.
#pragma once

#include <string>
#include <vector>

namespace msmon {

// $XDG_CACHE_HOME/msmon/<hash of the canonical monitored folders>.db: node-local, never in the training dir.
std::string default_store_path(const std::vector<std::string>& monitored_dirs);

// An exclusive flock on "<store>.lock", held for the life of the object.
class StoreWriterLock {
public:
    explicit StoreWriterLock(const std::string& store_path);
    ~StoreWriterLock();
    StoreWriterLock(const StoreWriterLock&) = delete;
    StoreWriterLock& operator=(const StoreWriterLock&) = delete;
    bool held() const { return held_; }
    // When not held: who holds it ("pid 1234"), if known.
    const std::string& holder() const { return holder_; }

private:
    int fd_ = -1;
    bool held_ = false;
    std::string holder_;
};

}  // namespace msmon
