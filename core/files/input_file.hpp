// One way to open a file msmon reads (a JSON document, the monitor config, the previous prom file, a settings
// file): never blocking (O_NONBLOCK: a FIFO or a device planted under the name would block open() and read()
// forever, and with them every rank's ingest or the UI), never through a symbolic link where links are not wanted
// (O_NOFOLLOW), a regular file only (fstat on the descriptor opened, so nothing can be swapped in between), and
// read within a bound that names the setting that raises it.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>

namespace msmon {

enum class InputLinks { follow, refuse };

class InputFile {
public:
    // `path` opened and checked: ok() or error() says why not, in words that follow the path ("is a FIFO, not a
    // regular file", "is a symbolic link: msmon does not read through it", "No such file or directory").
    static InputFile open(const std::string& path, InputLinks links);
    // The same for `name` in the folder `dir_fd` (openat).
    static InputFile open_at(int dir_fd, const std::string& name, InputLinks links);

    InputFile(InputFile&& o) noexcept;
    InputFile& operator=(InputFile&& o) noexcept;
    InputFile(const InputFile&) = delete;
    InputFile& operator=(const InputFile&) = delete;
    ~InputFile();

    // Why not, when not ok(): what the caller does differs.
    enum class Problem {
        none,
        missing,      // nothing is there (ENOENT, ENOTDIR): the usual case for an optional file
        not_regular,  // a FIFO, a folder, a device, a socket, or a link where links are refused: skipped, named
        too_large,    // past the bound (read_all)
        failed,       // any other error of open or read (EACCES, EIO)
    };
    bool ok() const { return fd_ >= 0 && problem_ == Problem::none; }
    Problem problem() const { return problem_; }
    bool missing() const { return problem_ == Problem::missing; }
    bool not_regular() const { return problem_ == Problem::not_regular; }
    bool too_large() const { return problem_ == Problem::too_large; }
    int fd() const { return fd_; }
    const struct stat& status() const { return st_; }  // also of a file refused as not regular (a link: S_IFLNK)
    const std::string& error() const { return error_; }

    // The whole file into `text`, at most `cap` bytes. More (the file grew past it, or it is larger): false, with
    // error() "is larger than 64 MiB (the limit limits.json_document_mib in msmon's settings)" ("is larger than 1 MiB"
    // for a bound that is no setting: "").
    bool read_all(std::string& text, std::int64_t cap, const std::string& cap_setting);

private:
    InputFile() = default;
    void check(int fd);
    int fd_ = -1;
    Problem problem_ = Problem::none;
    struct stat st_ {};
    std::string error_;
};

// What a file type is called in messages: "a FIFO", "a folder", "a device", "a socket", "a symbolic link".
const char* file_type_name(mode_t mode);

// "64 MiB", "1.5 GiB", "512 bytes".
std::string byte_size_text(std::int64_t bytes);

// The whole of `path` as InputFile reads it: false with `error` ("PATH is a FIFO, not a regular file"); `missing`
// (if given) says that nothing was there.
bool read_input_file(const std::string& path, InputLinks links, std::int64_t cap, const std::string& cap_setting,
                     std::string& text, std::string& error, bool* missing = nullptr);

}  // namespace msmon
