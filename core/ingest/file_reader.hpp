// What every reader of an input format does (core/ingest/file_formats.hpp names the reader of each format). An
// appended file is read by the engine from where the last read stopped and handed over a read at a time; a file
// rewritten whole is handed over by name, to be read again if it changed.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/ingest/tracked_file.hpp"
#include "core/model/record_batch.hpp"

namespace msmon {

struct ConsumeResult {
    std::size_t consumed = 0;  // bytes of whole records used; the rest waits for its newline
    std::int64_t lines = 0;    // physical lines consumed
    std::size_t rows = 0;
    std::size_t issues = 0;
};

class FileReader {
public:
    virtual ~FileReader() = default;
    // Formats appended to: `bytes` starts at file.progress.offset; `file_size` is the file's size when they were
    // read (they may stop short of it). Only whole records are used: what is returned as consumed is not handed
    // over again.
    virtual ConsumeResult consume(TrackedFile& file, std::string_view bytes, std::int64_t file_size,
                                  RecordBatch& batch);
    // Formats rewritten whole: reads the file again if it changed since it was last read.
    virtual void read_whole(TrackedFile& file, RecordBatch& batch);
};

}  // namespace msmon
