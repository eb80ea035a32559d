// CSV records → SampleRows. Data files are line records (a stray quote spoils one line, not the file);
// stack_info.csv has quoted multi-line fields and is read record by record.
#include "core/ingest/csv_consumer.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

#include "core/ingest/issue_cap.hpp"
#include "core/text/csv_record.hpp"
#include "core/text/display_escape.hpp"

namespace msmon {

std::string_view v2_kind(std::string_view slug, std::string_view scope, std::string_view name) {
    auto ends_with = [](std::string_view s, std::string_view suffix) {
        return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
    };
    if (slug == "module") return scope == "backward" ? "actv_grad" : "actv";
    if (slug == "weight_grad") return scope == "reduced" ? "grad_reduced" : "grad_unreduced";
    if (slug == "optimizer") return ends_with(name, ".exp_avg_sq") ? "exp_avg_sq" : "exp_avg";
    if (slug == "param") return scope == "param_updated" ? "param_updated" : "param_origin";
    if (slug == "cc") return "other";
    return slug;
}

void CsvConsumer::issue(TrackedFile& file, std::int64_t line, std::string reason, std::string_view text,
                        RecordBatch& batch, ConsumeResult& result) {
    ++result.issues;
    add_issue(file.progress, batch, [&] {
        ParseIssue p;
        p.file_id = file.progress.id;
        p.path = file.progress.path;
        p.line = line;
        p.excerpt = escape_for_display(text, 160);
        p.reason = std::move(reason);
        return p;
    });
}

void CsvConsumer::handle_header(TrackedFile& file, std::string_view record, std::int64_t line, RecordBatch& batch,
                                ConsumeResult& result) {
    file.progress.header = share_text(record);
    if (file.role == CsvRole::stack_info) return;
    if (!split_csv_fields(record, fields_, scratch_)) {
        file.header_rejected = true;
        issue(file, line, "unusable header: bad quoting", record, batch, result);
        return;
    }
    auto schema = shared_csv_header(record, fields_, error_);
    if (!schema) {
        file.header_rejected = true;
        issue(file, line, "unusable header: " + error_, record, batch, result);
        return;
    }
    file.layout_id = keys_.layout_id(schema->layout, batch);
    file.schema = std::move(schema);
}

void CsvConsumer::handle_data(TrackedFile& file, std::string_view record, std::int64_t line, RecordBatch& batch,
                              ConsumeResult& result) {
    const bool split = split_csv_fields(record, fields_, scratch_);
    // A header again mid-file: the lines after it are read by it (core/parse/msprobe_csv.hpp).
    if (split && is_header_record(fields_)) {
        spdlog::info("{} line {}: a header again; the lines after it are read by its columns", file.progress.path,
                     line);
        file.header_rejected = false;
        handle_header(file, record, line, batch, result);
        return;
    }
    if (file.header_rejected || !file.schema) {
        issue(file, line, "row under an unusable header", record, batch, result);
        return;
    }
    if (!split) {
        issue(file, line, "bad quoting", record, batch, result);
        return;
    }
    if (!parse_csv_row(*file.schema, fields_, row_, error_)) {
        const CcRow cc = parse_cc_row(*file.schema, fields_, row_);
        if (cc == CcRow::not_cc) {
            issue(file, line, error_, record, batch, result);
            return;
        }
        if (cc == CcRow::several_tensors) {
            const std::string op(fields_[0]);
            if (std::find(file.cc_told.begin(), file.cc_told.end(), op) == file.cc_told.end()) {
                file.cc_told.push_back(op);
                issue(file, line,
                      "communication (cc_distribution) rows of " + op +
                          ": msprobe writes the values of all its pre_i/post_i tensors into one row, with the step "
                          "among them, so which value is whose cannot be told; these rows are not read (counted, "
                          "said once per op)",
                      record, batch, result);
            } else {
                ++result.issues;
                ++file.progress.issues;
                ++batch.unstored_issues;
            }
            return;
        }
    }
    const std::string_view kind =
        file.v2 ? v2_kind(file.progress.kind, row_.scope, row_.name) : std::string_view(file.progress.kind);
    const std::int64_t tensor = tensor_id(file, kind, line, batch);
    SampleRow& out = batch.rows.emplace_back();
    out.tensor_id = tensor;
    out.step = row_.step;
    out.layout_id = static_cast<std::int32_t>(file.layout_id);
    out.shape_id = row_.shape.data() ? static_cast<std::int32_t>(keys_.text_id(row_.shape, batch)) : 0;
    out.dtype_id = row_.dtype.data() ? static_cast<std::int32_t>(keys_.text_id(row_.dtype, batch)) : 0;
    out.value_count = row_.value_count;
    std::memcpy(out.values, row_.values, sizeof(double) * static_cast<std::size_t>(row_.value_count));
    ++result.rows;
}

std::int64_t CsvConsumer::tensor_id(const TrackedFile& file, std::string_view kind, std::int64_t line,
                                    RecordBatch& batch) {
    seen_key_.assign(reinterpret_cast<const char*>(&file.progress.run_id), sizeof file.progress.run_id);
    seen_key_ += file.progress.kind;
    std::vector<std::int64_t>& seen = seen_[seen_key_];
    const std::size_t index = line >= 2 ? static_cast<std::size_t>(line - 2) : 0;  // line 1 is the header
    if (index < seen.size()) {
        const TensorInfo* t = keys_.tensor(seen[index]);
        if (t && t->run_id == file.progress.run_id && t->name == row_.name && t->kind == kind &&
            t->vpp_stage == row_.vpp_stage && t->micro_step == row_.micro_step)
            return t->id;
    }
    const std::int64_t id =
        keys_.tensor_id(file.progress.run_id, kind, row_.vpp_stage, row_.name, row_.micro_step, file.layout_id, batch);
    if (index < 65536) {  // bounded: a file of more rows than that is predicted for its first 65,536 only
        if (index >= seen.size()) seen.resize(index + 1, 0);
        seen[index] = id;
    }
    return id;
}

void CsvConsumer::handle_stack(TrackedFile& file, std::string_view record, std::int64_t line, RecordBatch& batch,
                               ConsumeResult& result) {
    if (!split_csv_fields(record, fields_, scratch_) || fields_.size() != 2) {
        issue(file, line, "stack_info record is not <module>,<stack>", record, batch, result);
        return;
    }
    batch.stacks.push_back({file.progress.run_id, std::string(fields_[0]), std::string(fields_[1])});
    ++result.rows;
}

ConsumeResult CsvConsumer::consume(TrackedFile& file, std::string_view bytes, std::int64_t, RecordBatch& batch) {
    ConsumeResult result;
    const bool multiline = file.role == CsvRole::stack_info;
    const std::size_t last_nl = bytes.rfind('\n');
    const std::size_t usable =
        multiline ? complete_records_length(bytes) : (last_nl == std::string_view::npos ? 0 : last_nl + 1);
    std::size_t pos = 0;
    std::int64_t line = file.progress.line;  // lines consumed before this record
    while (pos < usable) {
        std::size_t end;
        std::size_t physical = 1;
        if (multiline) {
            end = csv_record_end(bytes.substr(0, usable), pos);
            physical = 0;
            for (std::size_t k = pos; k < end; ++k) physical += bytes[k] == '\n';
        } else {
            const char* nl = static_cast<const char*>(std::memchr(bytes.data() + pos, '\n', usable - pos));
            end = static_cast<std::size_t>(nl - bytes.data()) + 1;
        }
        std::string_view record = bytes.substr(pos, end - pos);
        while (!record.empty() && (record.back() == '\n' || record.back() == '\r')) record.remove_suffix(1);
        const std::int64_t first_line = line + 1;
        if (line == 0 && file.progress.offset + static_cast<std::int64_t>(pos) == 0) {
            handle_header(file, record, first_line, batch, result);
        } else if (record.empty()) {
            // Blank lines carry nothing; pandas never writes them, but a hand edit might.
        } else if (multiline) {
            handle_stack(file, record, first_line, batch, result);
        } else {
            handle_data(file, record, first_line, batch, result);
        }
        line += static_cast<std::int64_t>(physical);
        pos = end;
    }
    result.consumed = pos;
    result.lines = line - file.progress.line;
    return result;
}

}  // namespace msmon
