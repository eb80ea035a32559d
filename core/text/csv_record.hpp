// RFC 4180 records: where complete records end in a growing buffer, and how one splits into fields.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace msmon {

// Length of the prefix of `data` made of complete records: up to and including the last '\n' that is not
// inside a quoted field. A partial last record (no newline yet, or an open quote) is left for later.
std::size_t complete_records_length(std::string_view data);

// Index just past the first '\n' outside quotes at or after `from`; npos when that record is incomplete.
std::size_t csv_record_end(std::string_view data, std::size_t from);

// Walks complete records in a buffer, one at a time, counting physical lines for error messages.
class CsvRecordCursor {
public:
    explicit CsvRecordCursor(std::string_view data) : data_(data) {}
    // Next record without its line terminator ("\n" or "\r\n"); false at the end.
    bool next(std::string_view& record, std::size_t& physical_lines);

private:
    std::string_view data_;
    std::size_t pos_ = 0;
};

// Splits one record into fields. Quoted fields are unquoted ("" -> "). Views point into `record` or into
// `scratch`, which this call owns for the views' lifetime. Returns false for a malformed quote.
bool split_csv_fields(std::string_view record, std::vector<std::string_view>& fields, std::string& scratch);

// Appends `field` to out, quoted per RFC 4180 when it holds a comma, quote, CR or LF.
void append_csv_field(std::string& out, std::string_view field);

}  // namespace msmon
