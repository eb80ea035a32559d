// A reader asked to read a format the other way (a bug of the format table): said, never done silently.
#include "core/ingest/file_reader.hpp"

#include <stdexcept>
#include <string>

namespace msmon {

ConsumeResult FileReader::consume(TrackedFile& file, std::string_view, std::int64_t, RecordBatch&) {
    throw std::logic_error(std::string(format_info(file.format).name) + " is not read as an appended file");
}

void FileReader::read_whole(TrackedFile& file, RecordBatch&) {
    throw std::logic_error(std::string(format_info(file.format).name) + " is not read as a file rewritten whole");
}

}  // namespace msmon
