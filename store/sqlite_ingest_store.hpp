// The SQLite side of ingest: loads where reading stopped; commits a batch (rows + offsets) in one transaction.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/model/ingest_store.hpp"
#include "store/sqlite_handle.hpp"

namespace msmon {

class RankStepBlockWriter;
class AnomalyGroupWriter;
class SampleChunkWriter;

class SqliteIngestStore final : public IngestStore {
public:
    // Opens (creating and migrating if needed) the store at `path`. A non-empty `ship_destination` makes the
    // store a spool for it (store/ship_spool.hpp): from then on every commit also journals what it wrote. A store
    // already spooling for another destination is refused (std::runtime_error).
    explicit SqliteIngestStore(const std::string& path, const std::string& ship_destination = "");
    ~SqliteIngestStore() override;

    IngestSnapshot load_snapshot() override;
    std::optional<FileProgress> load_file(const std::string& path) override;
    std::vector<TensorInfo> load_tensors(std::int64_t run_id) override;
    std::vector<DetectorStateRecord> load_detector_states(const std::vector<std::int64_t>& tensor_ids) override;
    std::vector<StoredSample> load_samples(const std::string& kind, std::int64_t first_step,
                                           std::int64_t last_step) override;
    void visit_samples(const std::string& kind, std::int64_t first_step, std::int64_t last_step,
                       const std::function<void(StoredSample&)>& visit) override;
    void commit(const RecordBatch& batch) override;
    bool failure_may_pass(const std::exception& e) const override;

private:
    struct WriteStatements;
    Connection write_conn_;
    Connection read_conn_;                     // used by the reading thread only
    std::unique_ptr<Statement> file_by_path_;  // on read_conn_
    std::unique_ptr<WriteStatements> stmts_;
    std::unique_ptr<RankStepBlockWriter> blocks_;
    std::unique_ptr<AnomalyGroupWriter> groups_;
    std::unique_ptr<SampleChunkWriter> chunks_;
    bool last_commit_failed_ = false;   // chunks_ then forgets what it learned about the stored chunks
    std::vector<std::uint32_t> order_;  // a batch's rows in (tensor, step) order
    bool journal_ = false;              // a spool: commits append to ship_journal
};

}  // namespace msmon
