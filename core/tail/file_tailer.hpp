// Reads what was appended to a file since the stored offset; recognises truncation and replacement.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/model/record_batch.hpp"

namespace msmon {

enum class TailStatus {
    unchanged,  // nothing new
    data,       // `bytes` holds new data starting at progress.offset
    missing,    // the path does not exist (deleted, or not yet created); stored data is kept
    error,      // could not open or read (permission, I/O): `error` says why
};

struct TailRead {
    TailStatus status = TailStatus::unchanged;
    bool restarted = false;  // the file was truncated or replaced: progress was reset to offset 0
    std::string restart_reason;
    std::string error;
    bool more = false;          // the read stopped at max_bytes: call again
    std::int64_t mtime_ms = 0;  // the file's modification time (ms since the epoch), when it could be read
    std::int64_t size = 0;      // the file's size when it was read (the bytes may stop short of it: `more`)
};

// Fingerprint: a hash of the first bytes of the file, to tell an in-place rewrite from an append.
inline constexpr std::uint32_t kFingerprintBytes = 256;
std::uint64_t fingerprint_hash(const char* data, std::size_t len);
// The hash of (hashed bytes + data), given the hash of the hashed bytes.
std::uint64_t fingerprint_extend(std::uint64_t hash, const char* data, std::size_t len);

// Reads up to `max_bytes` after progress.offset into `bytes` (replacing its content). If the file at the path
// is no longer the one the progress describes (other inode, smaller than the offset, different first bytes),
// progress is reset to the start of the new file and `restarted` is set.
TailRead tail_file(FileProgress& progress, std::string& bytes, std::size_t max_bytes);

// What `path` is now, against the progress of a file read before under another name (a rotation): `same_file`
// (the same inode: renamed), `copy` (another inode whose first bytes are the ones that progress fingerprinted:
// copied), `too_short` (fewer bytes than the fingerprint covers yet: a copy may be in progress), or `other`.
enum class FileIdentity { same_file, copy, too_short, other };
FileIdentity identify_file(const std::string& path, const FileProgress& read_before, std::uint64_t& dev,
                           std::uint64_t& ino);

// After the caller consumed `consumed` bytes of what tail_file returned: advance the offset and extend the
// fingerprint over the consumed bytes (up to kFingerprintBytes).
void advance_progress(FileProgress& progress, const std::string& bytes, std::size_t consumed, std::int64_t lines);

}  // namespace msmon
