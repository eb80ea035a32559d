// msprobe statistics CSVs (v1 and monitor_v2): the header decides the columns; rows become typed values.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/record_batch.hpp"

namespace msmon {

enum class OpType : std::uint8_t { numeric, shape, dtype };

// Column roles from a header line. Ops are every column that is not an identifying column.
struct CsvSchema {
    int vpp_col = -1;
    int name_col = -1;  // "name" (v1) or "module_name" (v2)
    int step_col = -1;
    int micro_col = -1;  // optional
    int scope_col = -1;  // v2 only
    std::size_t field_count = 0;
    std::vector<int> op_cols;      // header order
    std::vector<OpType> op_types;  // parallel to op_cols
    std::vector<std::string> op_names;
    std::string layout;  // op names joined by ',' in header order: identifies the value layout in the store
    int numeric_ops = 0;
};

// Builds the schema from the header's fields, or explains why the header is unusable.
std::optional<CsvSchema> parse_csv_header(const std::vector<std::string_view>& header, std::string& error);

// The same, shared: files with the same header text share one immutable schema (200,000 files of a large job
// have a handful of distinct headers). Null when the header is unusable.
std::shared_ptr<const CsvSchema> shared_csv_header(std::string_view header_text,
                                                   const std::vector<std::string_view>& header, std::string& error);

// Whether a record's fields are a header: a data row never holds the word "step" as a field (its step is a number).
// A header again mid-file re-maps the columns of the lines after it (a writer that appended with another column
// order, two files concatenated); its rows are never read by the header before it.
bool is_header_record(const std::vector<std::string_view>& fields);

// One data row, as views into the record (valid until the next record).
struct CsvRow {
    std::string_view vpp_stage;
    std::string_view name;
    std::string_view scope;
    std::optional<std::int64_t> micro_step;
    std::int64_t step = 0;
    std::string_view shape;
    std::string_view dtype;
    int value_count = 0;
    double values[kMaxNumericOps] = {};  // numeric ops in header order
};

// Fills `row` from the fields of one record. A row that does not fit the header (field count, a step or
// micro_step that is not an integer, an op cell that is not a number) is rejected with the reason: the caller
// counts and logs it; nothing is guessed.
bool parse_csv_row(const CsvSchema& schema, const std::vector<std::string_view>& fields, CsvRow& row,
                   std::string& error);

// msprobe's communication rows (cc_distribution, in other_*.csv) do not fit their header: their tag has no
// "<vpp>:" part, so the row is "<op>,<v0>,<step>,<v1>,…" (the step inserted after the first value), and the values
// of every pre_i/post_i tensor of one op are run together. A row with one tensor's values (one field fewer than
// the header) is read: vpp_stage empty, name the op (all_reduce), its values in header order. One with more
// tensors cannot be split into them. Neither: not a cc row (the caller reports why parse_csv_row refused it).
enum class CcRow { not_cc, read, several_tensors };
CcRow parse_cc_row(const CsvSchema& schema, const std::vector<std::string_view>& fields, CsvRow& row);

}  // namespace msmon
