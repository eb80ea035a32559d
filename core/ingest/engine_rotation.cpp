// Rotated logs: a log renamed (mv rotation, also while msmon was stopped) or copied (copy-truncate) goes on from the
// progress read under its old name instead of being read again from byte 0.
#include <sys/stat.h>

#include "core/ingest/folder_listing.hpp"
#include "core/ingest/ingest_engine_impl.hpp"
#include "core/tail/file_tailer.hpp"

namespace msmon {

bool IngestEngine::Impl::is_rotated_name(const std::string& name) {
    const auto dot = name.find_last_of('.');
    return dot != std::string::npos && dot + 1 < name.size() &&
           name.find_first_not_of("0123456789", dot + 1) == std::string::npos;
}

bool IngestEngine::Impl::claim_progress(const std::string& dir, const std::string& path, bool allow_copy,
                                        std::optional<FileProgress>& out) {
    auto consider = [&](const FileProgress& p) {
        if (p.offset == 0 || p.path == path || dirname_of(p.path) != dir) return FileIdentity::other;
        std::uint64_t dev = 0, ino = 0;
        const FileIdentity id = identify_file(path, p, dev, ino);
        if (id == FileIdentity::same_file || (allow_copy && id == FileIdentity::copy)) {
            out = p;
            out->dev = dev;
            out->ino = ino;
        }
        return id;
    };
    bool short_now = false;
    for (auto it = retired_logs.begin(); it != retired_logs.end(); ++it) {
        const FileIdentity id = consider(*it);
        short_now |= id == FileIdentity::too_short;
        if (out) {
            retired_logs.erase(it);
            break;
        }
    }
    if (!out)
        for (const auto& [_, other] : files) {
            if (!format_info(other->format).rotates) continue;
            short_now |= consider(other->progress) == FileIdentity::too_short;
            if (out) break;
        }
    if (out) {
        notice("'" + path + "' holds what was read of '" + out->path + "' (a rotated log): going on from byte " +
               std::to_string(out->offset));
        return true;
    }
    return !(allow_copy && short_now);
}

void IngestEngine::Impl::retire(const FileProgress& p) {
    if (p.offset == 0) return;
    retired_logs.push_back(p);
    if (retired_logs.size() > kRetiredLogs) retired_logs.pop_front();
}

void IngestEngine::Impl::follow_rotation(TrackedFile& f) {
    if (f.progress.offset == 0) return;
    std::uint64_t dev = 0, ino = 0;
    if (identify_file(f.progress.path, f.progress, dev, ino) == FileIdentity::same_file) return;
    struct stat st {};
    if (::stat(f.progress.path.c_str(), &st) != 0) return;  // gone: nothing to read, progress stays
    const FileProgress mine = f.progress;
    std::optional<FileProgress> moved;
    claim_progress(dirname_of(mine.path), mine.path, false, moved);
    retire(mine);
    if (moved) {
        f.progress = *moved;
        f.progress.id = mine.id;
        f.progress.path = mine.path;
        f.progress.run_id = mine.run_id;
    }
}

}  // namespace msmon
