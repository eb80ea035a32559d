// RFC 4180 records: quote-aware record boundaries and field splitting, no allocation per field.
#include "core/text/csv_record.hpp"

#include <cstring>

namespace msmon {

std::size_t complete_records_length(std::string_view data) {
    bool in_quotes = false;
    std::size_t complete = 0;
    const char* p = data.data();
    const char* end = p + data.size();
    while (p < end) {
        if (!in_quotes) {
            // Fast path: jump to the next quote or newline.
            const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
            const char* q =
                static_cast<const char*>(std::memchr(p, '"', static_cast<std::size_t>((nl ? nl : end) - p)));
            if (q) {
                in_quotes = true;
                p = q + 1;
                continue;
            }
            if (!nl) break;
            complete = static_cast<std::size_t>(nl - data.data()) + 1;
            p = nl + 1;
        } else {
            const char* q = static_cast<const char*>(std::memchr(p, '"', static_cast<std::size_t>(end - p)));
            if (!q) break;
            in_quotes = false;  // a doubled "" re-enters quotes on the next character
            p = q + 1;
        }
    }
    return complete;
}

std::size_t csv_record_end(std::string_view data, std::size_t from) {
    const char* base = data.data();
    const char* p = base + from;
    const char* end = base + data.size();
    bool in_quotes = false;
    while (p < end) {
        if (!in_quotes) {
            const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
            const char* stop = nl ? nl : end;
            const char* q = static_cast<const char*>(std::memchr(p, '"', static_cast<std::size_t>(stop - p)));
            if (q) {
                in_quotes = true;
                p = q + 1;
                continue;
            }
            if (!nl) return std::string_view::npos;
            return static_cast<std::size_t>(nl - base) + 1;
        }
        const char* q = static_cast<const char*>(std::memchr(p, '"', static_cast<std::size_t>(end - p)));
        if (!q) return std::string_view::npos;
        in_quotes = false;
        p = q + 1;
    }
    return std::string_view::npos;
}

bool CsvRecordCursor::next(std::string_view& record, std::size_t& physical_lines) {
    if (pos_ >= data_.size()) return false;
    std::size_t end = csv_record_end(data_, pos_);
    if (end == std::string_view::npos) end = data_.size();  // unterminated tail: hand it out whole
    std::string_view raw = data_.substr(pos_, end - pos_);
    physical_lines = 0;
    for (char c : raw)
        if (c == '\n') ++physical_lines;
    if (physical_lines == 0) physical_lines = 1;
    if (!raw.empty() && raw.back() == '\n') raw.remove_suffix(1);
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    record = raw;
    pos_ = end;
    return true;
}

bool split_csv_fields(std::string_view record, std::vector<std::string_view>& fields, std::string& scratch) {
    fields.clear();
    scratch.clear();
    scratch.reserve(record.size());  // views into scratch must never move
    std::size_t i = 0;
    const std::size_t n = record.size();
    while (true) {
        if (i < n && record[i] == '"') {
            ++i;
            const std::size_t start = scratch.size();
            bool closed = false;
            while (i < n) {
                char c = record[i];
                if (c == '"') {
                    if (i + 1 < n && record[i + 1] == '"') {
                        scratch.push_back('"');
                        i += 2;
                        continue;
                    }
                    closed = true;
                    ++i;
                    break;
                }
                scratch.push_back(c);
                ++i;
            }
            if (!closed) return false;
            fields.emplace_back(scratch.data() + start, scratch.size() - start);
            if (i == n) return true;
            if (record[i] != ',') return false;  // text after a closing quote
            ++i;
        } else {
            const std::size_t comma = record.find(',', i);
            const std::size_t stop = comma == std::string_view::npos ? n : comma;
            std::string_view field = record.substr(i, stop - i);
            if (field.find('"') != std::string_view::npos) return false;  // stray quote in a bare field
            fields.push_back(field);
            if (comma == std::string_view::npos) return true;
            i = comma + 1;
        }
    }
}

void append_csv_field(std::string& out, std::string_view field) {
    if (field.find_first_of(",\"\r\n") == std::string_view::npos) {
        out.append(field);
        return;
    }
    out.push_back('"');
    for (char c : field) {
        if (c == '"') out.push_back('"');
        out.push_back(c);
    }
    out.push_back('"');
}

}  // namespace msmon
