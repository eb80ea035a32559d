// Reads files their producers rewrite whole (anomaly dumps, health_ckpts.json, module_struct.json): re-read on
// change, retried briefly when caught mid-write, reconciled into the batch.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ingest/file_reader.hpp"

namespace msmon {

class WholeFileReader : public FileReader {
public:
    using Clock = std::chrono::steady_clock;
    WholeFileReader(const std::vector<WholeFileState>& stored, std::function<void(const std::string&)> notice);

    // Reads the file if it changed since it was last read; adds what it holds to the batch.
    void read_whole(TrackedFile& file, RecordBatch& batch) override;
    // Files caught mid-write whose retry time has come.
    std::vector<std::string> due_retries(Clock::time_point now);
    std::optional<Clock::time_point> next_retry() const;

private:
    struct Retry {
        Clock::time_point due;
        int attempts = 0;
    };
    std::unordered_map<std::string, WholeFileState> known_;
    std::map<std::string, Retry> retries_;
    std::function<void(const std::string&)> notice_;
};

}  // namespace msmon
