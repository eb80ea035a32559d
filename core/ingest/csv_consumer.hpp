// Turns complete CSV records of one file into rows, stack entries and parse issues in a batch.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/ingest/file_reader.hpp"
#include "core/model/key_registry.hpp"

namespace msmon {

class CsvConsumer : public FileReader {
public:
    explicit CsvConsumer(KeyRegistry& keys) : keys_(keys) {}
    // Only whole records are used (a CSV's size plays no part).
    ConsumeResult consume(TrackedFile& file, std::string_view bytes, std::int64_t file_size,
                          RecordBatch& batch) override;

private:
    void handle_header(TrackedFile& file, std::string_view record, std::int64_t line, RecordBatch& batch,
                       ConsumeResult& result);
    void handle_data(TrackedFile& file, std::string_view record, std::int64_t line, RecordBatch& batch,
                     ConsumeResult& result);
    void handle_stack(TrackedFile& file, std::string_view record, std::int64_t line, RecordBatch& batch,
                      ConsumeResult& result);
    void issue(TrackedFile& file, std::int64_t line, std::string reason, std::string_view text, RecordBatch& batch,
               ConsumeResult& result);

    // Files of one (run, file kind) list their tensors in the same order step after step: the tensor of data row
    // i is predicted from row i of the previous such file and checked field by field against the registry's
    // record of it, which costs a few compares instead of building and hashing the tensor's key. A miss asks the
    // registry by key.
    std::int64_t tensor_id(const TrackedFile& file, std::string_view kind, std::int64_t line, RecordBatch& batch);

    KeyRegistry& keys_;
    std::unordered_map<std::string, std::vector<std::int64_t>> seen_;  // tensor ids by run id + file kind, row order
    std::string seen_key_;
    std::vector<std::string_view> fields_;
    std::string scratch_;
    std::string error_;
    CsvRow row_;
};

// The msmon kind of a monitor_v2 row: v1's prefix where one matches (module+forward → actv, ...).
std::string_view v2_kind(std::string_view slug, std::string_view scope, std::string_view name);

}  // namespace msmon
