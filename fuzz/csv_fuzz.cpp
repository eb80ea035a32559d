// libFuzzer target: msprobe statistics CSVs through csv_record (record boundaries, field splitting) and
// msprobe_csv (header → schema, record → row, a header again mid-file), as the CSV consumer drives them.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/parse/msprobe_csv.hpp"
#include "core/text/csv_record.hpp"
#include "core/text/number_text.hpp"

namespace {

void check(bool ok) {
    if (!ok) std::abort();
}

// A parsed number re-rendered and re-parsed must be the same double (NaN stays NaN, -0.0 keeps its sign).
void check_number_round_trip(double v) {
    const std::string text = msmon::format_double(v);
    const auto back = msmon::parse_double(text);
    check(back.has_value());
    if (std::isnan(v)) {
        check(std::isnan(*back));
    } else {
        check(std::memcmp(&v, &*back, sizeof v) == 0);
    }
}

// Re-joining split fields with append_csv_field and splitting again gives the same fields.
void check_field_round_trip(const std::vector<std::string_view>& fields) {
    std::string joined;
    for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i) joined.push_back(',');
        msmon::append_csv_field(joined, fields[i]);
    }
    std::vector<std::string_view> again;
    std::string scratch;
    check(msmon::split_csv_fields(joined, again, scratch));
    check(again.size() == fields.size());
    for (std::size_t i = 0; i < fields.size(); ++i) check(again[i] == fields[i]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);

    // Record boundaries: the complete prefix ends just after a newline, and the cursor walks all of it.
    const std::size_t complete = msmon::complete_records_length(bytes);
    check(complete <= size);
    check(complete == 0 || bytes[complete - 1] == '\n');

    msmon::CsvRecordCursor cursor(bytes.substr(0, complete));
    std::vector<std::string_view> fields;
    std::string scratch;
    std::optional<msmon::CsvSchema> schema;
    std::string error;
    msmon::CsvRow row;
    std::string_view record;
    std::size_t lines = 0;
    std::size_t walked = 0;
    while (cursor.next(record, lines)) {
        check(lines >= 1);
        if (++walked > size + 1) std::abort();  // every record consumes at least one byte
        if (!msmon::split_csv_fields(record, fields, scratch)) continue;
        check(!fields.empty());
        check_field_round_trip(fields);
        // The first record is the header, and so is any later one that is (its lines are read by it), as the CSV
        // consumer reads a file.
        if (!schema || msmon::is_header_record(fields)) {
            schema = msmon::parse_csv_header(fields, error);
            if (schema) {
                check(schema->op_cols.size() == schema->op_types.size());
                check(schema->numeric_ops <= msmon::kMaxNumericOps);
            }
            // The process-wide cache of schemas by header text gives the same answer as a fresh parse.
            const auto shared = msmon::shared_csv_header(record, fields, error);
            check(static_cast<bool>(shared) == schema.has_value());
            if (shared) check(shared->layout == schema->layout && shared->field_count == schema->field_count);
            continue;
        }
        if (msmon::parse_csv_row(*schema, fields, row, error)) {
            check(row.value_count == schema->numeric_ops);
            for (int k = 0; k < row.value_count; ++k) check_number_round_trip(row.values[k]);
        }
    }

    // The tail after the complete records, and the record-end search from every early offset.
    (void)msmon::csv_record_end(bytes, 0);
    if (size > 0) (void)msmon::csv_record_end(bytes, size / 2);

    // Every field of the whole input also goes through the number parsers on its own.
    if (size <= 64) {
        if (auto v = msmon::parse_double(bytes)) check_number_round_trip(*v);
        if (auto i = msmon::parse_int(bytes)) check(msmon::parse_int(std::to_string(*i)) == i);
    }
    return 0;
}
