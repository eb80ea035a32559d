// msprobe statistics CSVs: header → schema, record → typed row; exact numbers via from_chars.
#include "core/parse/msprobe_csv.hpp"

#include <algorithm>
#include <mutex>
#include <set>
#include <unordered_map>

#include "core/text/number_text.hpp"

namespace msmon {

std::optional<CsvSchema> parse_csv_header(const std::vector<std::string_view>& header, std::string& error) {
    CsvSchema s;
    s.field_count = header.size();
    std::set<std::string_view> seen;
    for (std::size_t i = 0; i < header.size(); ++i) {
        const std::string_view col = header[i];
        // A column named twice ("name,name", "norm,norm") has no meaning to pick: the file's rows are refused.
        if (!col.empty() && !seen.insert(col).second) {
            error = "column '" + std::string(col) + "' appears twice in the header";
            return std::nullopt;
        }
        const int idx = static_cast<int>(i);
        if (col == "vpp_stage") {
            s.vpp_col = idx;
        } else if (col == "name" || col == "module_name") {
            if (s.name_col >= 0) {
                error = "header has two name columns ('name' and 'module_name')";
                return std::nullopt;
            }
            s.name_col = idx;
        } else if (col == "step") {
            s.step_col = idx;
        } else if (col == "micro_step") {
            s.micro_col = idx;
        } else if (col == "scope") {
            s.scope_col = idx;
        } else {
            if (col.empty()) {
                error = "empty column name in header";
                return std::nullopt;
            }
            OpType type = col == "shape" ? OpType::shape : col == "dtype" ? OpType::dtype : OpType::numeric;
            if (type == OpType::numeric && ++s.numeric_ops > kMaxNumericOps) {
                error = "more than 8 numeric op columns in header (msprobe writes at most 7)";
                return std::nullopt;
            }
            s.op_cols.push_back(idx);
            s.op_types.push_back(type);
            s.op_names.emplace_back(col);
            if (!s.layout.empty()) s.layout.push_back(',');
            s.layout.append(col);
        }
    }
    if (s.name_col < 0 || s.step_col < 0) {
        error = "header has no 'name' or 'step' column";
        return std::nullopt;
    }
    if (s.op_cols.empty()) {
        error = "header has no op columns";
        return std::nullopt;
    }
    return s;
}

bool parse_csv_row(const CsvSchema& schema, const std::vector<std::string_view>& fields, CsvRow& row,
                   std::string& error) {
    if (fields.size() != schema.field_count) {
        error =
            "row has " + std::to_string(fields.size()) + " fields, header has " + std::to_string(schema.field_count);
        return false;
    }
    auto step = parse_int(fields[static_cast<std::size_t>(schema.step_col)]);
    if (!step) {
        error = "step is not an integer";
        return false;
    }
    row.step = *step;
    row.vpp_stage = schema.vpp_col >= 0 ? fields[static_cast<std::size_t>(schema.vpp_col)] : std::string_view();
    row.name = fields[static_cast<std::size_t>(schema.name_col)];
    row.scope = schema.scope_col >= 0 ? fields[static_cast<std::size_t>(schema.scope_col)] : std::string_view();
    row.micro_step.reset();
    if (schema.micro_col >= 0) {
        auto micro = parse_int(fields[static_cast<std::size_t>(schema.micro_col)]);
        if (!micro) {
            error = "micro_step is not an integer";
            return false;
        }
        row.micro_step = *micro;
    }
    row.shape = {};
    row.dtype = {};
    row.value_count = 0;
    for (std::size_t k = 0; k < schema.op_cols.size(); ++k) {
        const std::string_view cell = fields[static_cast<std::size_t>(schema.op_cols[k])];
        switch (schema.op_types[k]) {
            case OpType::shape:
                row.shape = cell;
                break;
            case OpType::dtype:
                row.dtype = cell;
                break;
            case OpType::numeric: {
                auto v = parse_double(cell);
                if (!v) {
                    error = "op '" + schema.op_names[k] + "' is not a number";
                    return false;
                }
                row.values[row.value_count++] = *v;
                break;
            }
        }
    }
    return true;
}

CcRow parse_cc_row(const CsvSchema& schema, const std::vector<std::string_view>& fields, CsvRow& row) {
    // The writer's header: vpp_stage,name,step,<ops>; the row: <op>,<v0>,<step>,<v1>,...
    if (schema.vpp_col != 0 || schema.name_col != 1 || schema.step_col != 2 || schema.micro_col >= 0 ||
        schema.scope_col >= 0 || fields.size() < 3 || fields[0].empty() || parse_int(fields[0]) ||
        !parse_int(fields[2]) || !parse_double(fields[1]))
        return CcRow::not_cc;
    if (fields.size() != schema.field_count - 1) return CcRow::several_tensors;
    // The values in order: fields[1], then fields[3...]; the k-th op column (index >= 3) takes the (index-2)-th.
    auto value_of = [&](int col) { return fields[static_cast<std::size_t>(col == 3 ? 1 : col - 1)]; };
    row = CsvRow{};
    row.step = *parse_int(fields[2]);
    row.name = fields[0];
    for (std::size_t k = 0; k < schema.op_cols.size(); ++k) {
        const std::string_view cell = value_of(schema.op_cols[k]);
        switch (schema.op_types[k]) {
            case OpType::shape:
                row.shape = cell;
                break;
            case OpType::dtype:
                row.dtype = cell;
                break;
            case OpType::numeric: {
                const auto v = parse_double(cell);
                if (!v) return CcRow::not_cc;
                row.values[row.value_count++] = *v;
                break;
            }
        }
    }
    return CcRow::read;
}

std::shared_ptr<const CsvSchema> shared_csv_header(std::string_view header_text,
                                                   const std::vector<std::string_view>& header, std::string& error) {
    static std::mutex mu;
    static std::unordered_map<std::string, std::shared_ptr<const CsvSchema>> known;
    std::lock_guard lock(mu);
    if (const auto it = known.find(std::string(header_text)); it != known.end()) return it->second;
    auto schema = parse_csv_header(header, error);
    if (!schema) return nullptr;
    auto shared = std::make_shared<const CsvSchema>(std::move(*schema));
    if (known.size() < 4096) known.emplace(std::string(header_text), shared);  // bounded: headers are few
    return shared;
}

bool is_header_record(const std::vector<std::string_view>& fields) {
    return std::find(fields.begin(), fields.end(), std::string_view("step")) != fields.end();
}

}  // namespace msmon
