// File tailing with POSIX reads: open per read (close-to-open consistency on network filesystems).
#include "core/tail/file_tailer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/files/input_file.hpp"

namespace msmon {

namespace {

bool pread_full(int fd, char* buf, std::size_t len, std::int64_t offset, std::size_t& got) {
    got = 0;
    while (got < len) {
        ssize_t n = ::pread(fd, buf + got, len - got, static_cast<off_t>(offset + static_cast<std::int64_t>(got)));
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
    }
    return true;
}

void reset(FileProgress& p, const struct stat& st) {
    p.dev = static_cast<std::uint64_t>(st.st_dev);
    p.ino = static_cast<std::uint64_t>(st.st_ino);
    p.fp_len = 0;
    p.fp_hash = 0;
    p.offset = 0;
    p.line = 0;
    p.header.reset();
}

}  // namespace

std::uint64_t fingerprint_hash(const char* data, std::size_t len) {
    return fingerprint_extend(1469598103934665603ull, data, len);  // FNV-1a
}

std::uint64_t fingerprint_extend(std::uint64_t hash, const char* data, std::size_t len) {
    for (std::size_t i = 0; i < len; ++i) {
        hash ^= static_cast<unsigned char>(data[i]);
        hash *= 1099511628211ull;
    }
    return hash;
}

TailRead tail_file(FileProgress& progress, std::string& bytes, std::size_t max_bytes) {
    TailRead out;
    bytes.clear();
    // Opened as every input is (core/files/input_file): never blocking on a FIFO planted among the CSVs, a
    // regular file only. The links inside the job were vetted when the file was found.
    const InputFile in = InputFile::open(progress.path, InputLinks::follow);
    if (!in.ok()) {
        out.status = in.missing() ? TailStatus::missing : TailStatus::error;
        out.error = in.error();  // "is a FIFO, not a regular file", "Permission denied"
        return out;
    }
    const struct stat& st = in.status();

    out.mtime_ms = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
    out.size = static_cast<std::int64_t>(st.st_size);
    const bool known = progress.ino != 0 || progress.dev != 0;
    if (!known) {
        reset(progress, st);
    } else if (progress.dev != static_cast<std::uint64_t>(st.st_dev) ||
               progress.ino != static_cast<std::uint64_t>(st.st_ino)) {
        out.restarted = true;
        out.restart_reason = "replaced by another file (new inode)";
        reset(progress, st);
    } else if (st.st_size < progress.offset) {
        out.restarted = true;
        out.restart_reason =
            "truncated (size " + std::to_string(st.st_size) + " < offset " + std::to_string(progress.offset) + ")";
        reset(progress, st);
    } else if (progress.fp_len > 0) {
        // The first bytes we consumed must still be there: otherwise the file was rewritten in place.
        char head[kFingerprintBytes];
        std::size_t got = 0;
        if (!pread_full(in.fd(), head, progress.fp_len, 0, got)) {
            out.status = TailStatus::error;
            out.error = std::strerror(errno);
            return out;
        }
        if (got != progress.fp_len || fingerprint_hash(head, got) != progress.fp_hash) {
            out.restarted = true;
            out.restart_reason = "rewritten in place (first bytes changed)";
            reset(progress, st);
        }
    }
    if (st.st_size <= progress.offset) {
        out.status = TailStatus::unchanged;
        return out;
    }
    const auto available = static_cast<std::size_t>(st.st_size - progress.offset);
    const std::size_t want = available < max_bytes ? available : max_bytes;
    bytes.resize(want);
    std::size_t got = 0;
    if (!pread_full(in.fd(), bytes.data(), want, progress.offset, got)) {
        out.status = TailStatus::error;
        out.error = std::strerror(errno);
        bytes.clear();
        return out;
    }
    bytes.resize(got);
    out.status = got > 0 ? TailStatus::data : TailStatus::unchanged;
    out.more = got == max_bytes && available > max_bytes;
    return out;
}

FileIdentity identify_file(const std::string& path, const FileProgress& read_before, std::uint64_t& dev,
                           std::uint64_t& ino) {
    const InputFile f = InputFile::open(path, InputLinks::follow);
    if (!f.ok()) return FileIdentity::other;
    const struct stat& st = f.status();
    dev = static_cast<std::uint64_t>(st.st_dev);
    ino = static_cast<std::uint64_t>(st.st_ino);
    if (read_before.fp_len == 0) return FileIdentity::other;
    char head[kFingerprintBytes];
    std::size_t got = 0;
    if (!pread_full(f.fd(), head, read_before.fp_len, 0, got)) return FileIdentity::other;
    if (got < read_before.fp_len) return FileIdentity::too_short;
    if (fingerprint_hash(head, got) != read_before.fp_hash) return FileIdentity::other;
    return dev == read_before.dev && ino == read_before.ino ? FileIdentity::same_file : FileIdentity::copy;
}

void advance_progress(FileProgress& progress, const std::string& bytes, std::size_t consumed, std::int64_t lines) {
    const std::int64_t start = progress.offset;
    progress.offset += static_cast<std::int64_t>(consumed);
    progress.line += lines;
    // The fingerprint always covers min(offset, kFingerprintBytes) consumed bytes: extend it with the bytes
    // this read consumed, never with what the file holds later (that could adopt a rewrite).
    if (progress.fp_len < kFingerprintBytes && static_cast<std::int64_t>(progress.fp_len) == start) {
        const std::size_t n = std::min<std::size_t>(consumed, kFingerprintBytes - progress.fp_len);
        progress.fp_hash = progress.fp_len == 0 ? fingerprint_hash(bytes.data(), n)
                                                : fingerprint_extend(progress.fp_hash, bytes.data(), n);
        progress.fp_len += static_cast<std::uint32_t>(n);
    }
}

}  // namespace msmon
