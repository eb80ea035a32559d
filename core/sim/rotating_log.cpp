// Python logging's record text and RotatingFileHandler, written with one write(2) per record as CPython does.
#include "core/sim/rotating_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>

namespace msmon {

namespace {

bool exists(const std::string& path) {
    return ::access(path.c_str(), F_OK) == 0;
}

// len() of the record as a Python str: UTF-8 continuation bytes do not count.
std::int64_t characters(const std::string& s) {
    std::int64_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

}  // namespace

std::string asctime_now() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm tm{};
    ::localtime_r(&t, &tm);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d,%03d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
    return buf;
}

std::string mindspore_time_now() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
    std::tm tm{};
    ::localtime_r(&t, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02d-%02d:%02d:%02d.%03d.%03d", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(us / 1000),
                  static_cast<int>(us % 1000));
    return buf;
}

std::string file_sink_text(const Record& r, const std::string& time) {
    return "[" + std::string(r.level) + "] " + time + " [" + r.caller.file + ":" + std::to_string(r.caller.line) +
           "] " + r.caller.func + ": " + r.message + "\n";
}

std::string stdout_sink_text(const Record& r, const std::string& time, const std::string& logger_name) {
    return time + " - " + logger_name + "[" + r.caller.file + ":" + std::to_string(r.caller.line) + "] - " + r.level +
           " - " + r.message + "\n";
}

bool write_all(int fd, const char* data, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n <= 0) return false;
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

bool RotatingLog::open(std::string& error) {
    if (fd_ >= 0) return true;
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    if (fd_ < 0) {
        error = "cannot write " + path_;
        return false;
    }
    struct stat st {};
    size_ = ::fstat(fd_, &st) == 0 ? static_cast<std::int64_t>(st.st_size) : 0;
    return true;
}

void RotatingLog::close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

bool RotatingLog::emit(const std::string& record, std::int64_t& rotations, std::string& error) {
    if (!open(error)) return false;
    if (max_bytes_ > 0 && size_ + characters(record) >= max_bytes_) {
        if (!rollover(error)) return false;
        ++rotations;
    }
    if (!write_all(fd_, record.data(), record.size())) {
        error = "short write to " + path_;
        return false;
    }
    size_ += static_cast<std::int64_t>(record.size());
    return true;
}

bool RotatingLog::rollover(std::string& error) {
    close();
    for (int i = backup_count_ - 1; i > 0; --i) {
        const std::string src = path_ + "." + std::to_string(i), dst = path_ + "." + std::to_string(i + 1);
        if (!exists(src)) continue;
        if (exists(dst)) ::unlink(dst.c_str());
        ::rename(src.c_str(), dst.c_str());
    }
    const std::string first = path_ + ".1";
    if (exists(first)) ::unlink(first.c_str());
    if (::rename(path_.c_str(), first.c_str()) != 0) {
        error = "cannot rotate " + path_;
        return false;
    }
    return open(error);
}

}  // namespace msmon
