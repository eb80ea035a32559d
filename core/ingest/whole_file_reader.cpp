// An empty or cut JSON right after a change means the producer is still writing (they truncate, then write):
// retry every 200 ms for up to 3 s before calling the content invalid.
#include "core/ingest/whole_file_reader.hpp"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include "core/detect/anomaly_score.hpp"
#include "core/files/input_file.hpp"
#include "core/files/input_limits.hpp"
#include "core/ingest/issue_cap.hpp"
#include "core/parse/json_documents.hpp"
#include "core/tail/file_tailer.hpp"

namespace msmon {

namespace {

constexpr auto kRetryDelay = std::chrono::milliseconds(200);
constexpr int kMaxAttempts = 15;

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

void WholeFileReader::read_whole(TrackedFile& file, RecordBatch& batch) {
    const std::string& path = file.progress.path;
    // Opened without blocking and fstat'ed before anything is read (core/files/input_file): a FIFO or a device
    // planted under a producer's name would block a plain open or read forever, and with it every rank's ingest.
    InputFile in = InputFile::open(path, InputLinks::follow);
    const struct stat& st = in.status();
    if (!in.ok() && !in.not_regular()) {
        retries_.erase(path);
        return;
    }
    WholeFileState now;
    now.path = path;
    now.size = static_cast<std::int64_t>(st.st_size);
    now.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    auto known = known_.find(path);
    if (known != known_.end() && known->second.size == now.size && known->second.mtime_ns == now.mtime_ns &&
        !retries_.count(path))
        return;
    // This state of the file is done with, and why it gave nothing is its issue (line 0: the file as a whole).
    const auto give_up = [&](const std::string& reason) {
        retries_.erase(path);
        known_[path] = now;
        batch.whole_files.push_back(now);
        add_issue(file.progress, batch, [&] {
            ParseIssue p;
            p.file_id = file.progress.id;
            p.path = path;
            p.line = 0;
            p.reason = reason;
            return p;
        });
        batch.files.push_back(file.progress);  // the file row must exist for the issue to name it
    };
    if (!in.ok()) return give_up("not read: it " + in.error());  // "is a FIFO, not a regular file"
    std::string text;
    if (!in.read_all(text, input_limits().json_document, kJsonDocumentLimit)) {
        if (in.too_large()) return give_up("not read: it " + in.error());
        notice_("'" + path + "' " + in.error());
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
    if (outcome == ParseOutcome::invalid) return give_up("unreadable JSON: " + error);
    retries_.erase(path);
    known_[path] = now;
    batch.whole_files.push_back(now);
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
