// Python logging as MindFormers configures it: a record, its two formatters, RotatingFileHandler's file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace msmon {

// Where a record was logged from: %(filename)s:%(lineno)d and %(funcName)s.
struct Caller {
    const char* file;
    int line;
    const char* func;
};

struct Record {
    const char* level;
    Caller caller;
    std::string message;
    bool health_json_after = false;  // rank 0 rewrites health_ckpts.json right after this record
};

// %(asctime)s in local time: "2026-07-14 06:47:00,610".
std::string asctime_now();

// MindSpore's own time format: "2026-07-14-06:47:00.610.000".
std::string mindspore_time_now();

// The file handlers' line: "[INFO] <time> [<file>:<line>] <func>: <message>\n".
std::string file_sink_text(const Record& r, const std::string& time);

// The stdout handler's line (what msrun writes to the worker log): "<time> - <logger>[<file>:<line>] - ...".
std::string stdout_sink_text(const Record& r, const std::string& time, const std::string& logger_name);

// write(2) until all of `size` is written; false on error or a zero-length write.
bool write_all(int fd, const char* data, std::size_t size);

// Python's RotatingFileHandler on one file, opened for the records of one step at a time. Before a record it
// rolls over when tell() + len(record) >= maxBytes (tell counts bytes, len characters, as in CPython), by
// renaming info.log.4 -> .5 ... info.log -> info.log.1.
class RotatingLog {
public:
    // max_bytes: maxBytes, 0 never rotates; backup_count: backupCount (>= 1), the highest suffix kept.
    RotatingLog(std::string path, std::int64_t max_bytes, int backup_count)
        : path_(std::move(path)), max_bytes_(max_bytes), backup_count_(backup_count) {}
    RotatingLog(const RotatingLog&) = delete;
    RotatingLog& operator=(const RotatingLog&) = delete;
    RotatingLog(RotatingLog&& o) noexcept
        : path_(std::move(o.path_)),
          max_bytes_(o.max_bytes_),
          backup_count_(o.backup_count_),
          fd_(std::exchange(o.fd_, -1)),
          size_(o.size_) {}
    ~RotatingLog() { close(); }

    bool open(std::string& error);
    void close();
    // Returns false with `error` set on failure; counts a rollover in `rotations`.
    bool emit(const std::string& record, std::int64_t& rotations, std::string& error);

private:
    bool rollover(std::string& error);

    std::string path_;
    std::int64_t max_bytes_;
    int backup_count_;
    int fd_ = -1;
    std::int64_t size_ = 0;
};

}  // namespace msmon
