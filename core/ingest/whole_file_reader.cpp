// An empty or cut JSON right after a change means the producer is still writing (they truncate, then write):
// retry every 200 ms for up to 3 s before calling the content invalid.
#include "core/ingest/whole_file_reader.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/detect/anomaly_score.hpp"
#include "core/ingest/issue_cap.hpp"
#include "core/parse/json_documents.hpp"
#include "core/tail/file_tailer.hpp"

namespace msmon {

namespace {

constexpr auto kRetryDelay = std::chrono::milliseconds(200);
constexpr int kMaxAttempts = 15;
constexpr std::int64_t kMaxBytes = 512ll << 20;

const char* type_of(mode_t mode) {
    return S_ISFIFO(mode)                   ? "a FIFO"
           : S_ISDIR(mode)                  ? "a folder"
           : S_ISCHR(mode) || S_ISBLK(mode) ? "a device"
           : S_ISSOCK(mode)                 ? "a socket"
                                            : "not a regular file";
}

// The whole of `fd` (a regular file), at most `limit` bytes (more: false).
bool read_all(int fd, std::int64_t limit, std::string& text) {
    char buf[65536];
    while (true) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n == 0;
        text.append(buf, static_cast<std::size_t>(n));
        if (static_cast<std::int64_t>(text.size()) > limit) return false;
    }
}

}  // namespace

WholeFileReader::WholeFileReader(const std::vector<WholeFileState>& stored,
                                 std::function<void(const std::string&)> notice)
    : notice_(std::move(notice)) {
    for (const auto& s : stored) known_.emplace(s.path, s);
}

std::vector<std::string> WholeFileReader::due_retries(Clock::time_point now) {
    std::vector<std::string> out;
    for (const auto& [path, r] : retries_)
        if (r.due <= now) out.push_back(path);
    return out;
}

std::optional<WholeFileReader::Clock::time_point> WholeFileReader::next_retry() const {
    std::optional<Clock::time_point> best;
    for (const auto& [_, r] : retries_)
        if (!best || r.due < *best) best = r.due;
    return best;
}

void WholeFileReader::read(TrackedFile& file, RecordBatch& batch) {
    const std::string& path = file.progress.path;
    // Opened without blocking and fstat'ed before anything is read: a FIFO or a device planted under a producer's
    // name would block a plain open or read forever, and with it every rank's ingest.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0) {
        if (fd >= 0) ::close(fd);
        retries_.erase(path);
        return;
    }
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    WholeFileState now;
    now.path = path;
    now.size = static_cast<std::int64_t>(st.st_size);
    now.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    auto known = known_.find(path);
    if (known != known_.end() && known->second.size == now.size && known->second.mtime_ns == now.mtime_ns &&
        !retries_.count(path))
        return;
    if (!S_ISREG(st.st_mode)) {
        retries_.erase(path);
        known_[path] = now;
        batch.whole_files.push_back(now);
        add_issue(file.progress, batch, [&] {
            ParseIssue p;
            p.file_id = file.progress.id;
            p.path = path;
            p.line = 0;
            p.reason = std::string("not read: ") + type_of(st.st_mode) + ", not a regular file";
            return p;
        });
        batch.files.push_back(file.progress);  // the file row must exist for the issue to name it
        return;
    }
    if (now.size > kMaxBytes) {
        notice_("'" + path + "' is " + std::to_string(now.size) + " bytes, more than msmon reads of such a file");
        known_[path] = now;
        batch.whole_files.push_back(now);
        return;
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    std::string text;
    if (!read_all(fd, kMaxBytes, text)) {
        notice_("'" + path + "': " +
                (static_cast<std::int64_t>(text.size()) > kMaxBytes
                     ? "grew past " + std::to_string(kMaxBytes) + " bytes while read"
                     : std::string("read failed: ") + std::strerror(errno)));
        return;
    }
    now.hash = fingerprint_hash(text.data(), text.size());
    if (known != known_.end() && known->second.hash == now.hash && !text.empty()) {
        retries_.erase(path);
        known_[path] = now;
        batch.whole_files.push_back(now);
        return;  // touched, same content
    }
    std::string error;
    ParseOutcome outcome = ParseOutcome::invalid;
    std::vector<AnomalyRecord> anomalies;
    std::vector<CheckpointRecord> checkpoints;
    std::vector<ModuleStructEntry> modules;
    switch (file.format) {
        case FileFormat::json_anomaly_dump:
            outcome = parse_anomaly_dump(text, anomalies, error);
            break;
        case FileFormat::json_health:
            outcome = parse_health_checkpoints(text, path, checkpoints, error);
            break;
        case FileFormat::json_module_struct:
            outcome = parse_module_struct(text, file.rank, modules, error);
            break;
        default:
            return;
    }
    if (outcome == ParseOutcome::incomplete) {
        Retry& r = retries_[path];
        if (++r.attempts < kMaxAttempts) {
            r.due = Clock::now() + kRetryDelay;
            return;
        }
        error = "still empty or cut off after " + std::to_string(kMaxAttempts) + " reads";
        outcome = ParseOutcome::invalid;
    }
    retries_.erase(path);
    known_[path] = now;
    batch.whole_files.push_back(now);
    if (outcome == ParseOutcome::invalid) {
        add_issue(file.progress, batch, [&] {
            ParseIssue p;
            p.file_id = file.progress.id;
            p.path = path;
            p.line = 0;
            p.reason = "unreadable JSON: " + error;
            return p;
        });
        // The file row must exist for the issue to name it.
        batch.files.push_back(file.progress);
        return;
    }
    for (auto& a : anomalies) {
        a.score = anomaly_score(a);
        batch.anomalies.push_back(std::move(a));
    }
    if (file.format == FileFormat::json_health) {
        batch.checkpoint_sources.push_back(path);
        for (auto& c : checkpoints) batch.checkpoints.push_back(std::move(c));
    }
    for (auto& m : modules) batch.module_structs.push_back(std::move(m));
}

}  // namespace msmon
