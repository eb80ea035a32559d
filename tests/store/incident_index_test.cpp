// The TUI's incidents: every anomaly read and grouped again only when the store's anomaly count changes; the
// Overview's marks follow incidents (every rank of a severe one, none of msprobe's noise); past the limit
// nothing is read whole and the store's own marks stand in.
#include "store/incident_index.hpp"

#include <gtest/gtest.h>

#include "store/sqlite_ingest_store.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

AnomalyRecord anomaly(const char* source, const char* rule, int rank, std::int64_t step, const char* kind,
                      double score) {
    AnomalyRecord a;
    a.source = source;
    a.rule = rule;
    a.rank = rank;
    a.step = step;
    a.kind = kind;
    a.name = "layers.0.fc1.weight";
    a.op = "norm";
    a.tag_name = a.name + "/rank" + std::to_string(rank);
    a.key = a.tag_name + std::to_string(step) + rule;
    a.message = "m";
    a.score = score;
    return a;
}

void add(const std::string& db, std::vector<AnomalyRecord> anomalies) {
    SqliteIngestStore store(db);
    RecordBatch b;
    b.anomalies = std::move(anomalies);
    store.commit(b);
}

// The real store; counts the reads of every anomaly.
class CountingReader final : public Reader {
public:
    explicit CountingReader(const std::string& db) : owned_(open_sqlite_reader(db)), r_(*owned_) {}
    int whole_reads = 0;
    std::vector<AnomalyRecord> anomalies(const AnomalyFilter& f) override {
        ++whole_reads;
        return r_.anomalies(f);
    }
    void points(const PointFilter& f, const std::function<void(const Point&)>& s) override { r_.points(f, s); }
    StoreSummary summary() override { return r_.summary(); }
    std::vector<IssueRecord> issues(std::size_t n) override { return r_.issues(n); }
    AnomalyGroupPage anomaly_groups(const AnomalyGroupRequest& q) override { return r_.anomaly_groups(q); }
    AnomalyMarks anomaly_marks(double s, std::int64_t f) override { return r_.anomaly_marks(s, f); }
    std::vector<EventRecord> events() override { return r_.events(); }
    std::vector<RunConfigEntry> run_config(std::optional<int> rank) override { return r_.run_config(rank); }
    std::vector<CheckpointRecord> checkpoints() override { return r_.checkpoints(); }
    StoreCatalog catalog() override { return r_.catalog(); }
    std::vector<std::pair<int, std::int64_t>> rank_last_steps() override { return r_.rank_last_steps(); }
    ModuleInfo module_info(int rank, const std::string& name) override { return r_.module_info(rank, name); }
    std::vector<std::int64_t> collected_steps(std::size_t n) override { return r_.collected_steps(n); }
    std::vector<RunSegment> run_segments() override { return r_.run_segments(); }
    std::vector<StepWallTime> step_times() override { return r_.step_times(); }
    std::vector<RankSeries> rank_series(const RankSeriesRequest& req) override { return r_.rank_series(req); }

private:
    std::unique_ptr<Reader> owned_;
    Reader& r_;
};

TEST(IncidentIndex, regroups_only_when_the_anomaly_count_changes) {
    TempDir tmp;
    const std::string db = tmp / "s.db";
    add(db,
        {anomaly("detected", "NonFinite", 3, 35, "grad_reduced", 100),
         anomaly("detected", "Jump", 0, 20, "grad_unreduced", 80), anomaly("detected", "Jump", 1, 20, "exp_avg", 80)});
    CountingReader reader(db);
    IncidentIndex index;
    EXPECT_TRUE(index.update(reader));
    EXPECT_TRUE(index.grouped());
    ASSERT_EQ(index.incidents().size(), 2u);
    EXPECT_EQ(index.anomalies()[index.incidents()[0].origin].step, 35);
    const auto generation = index.generation();
    for (int refresh = 0; refresh < 5; ++refresh) EXPECT_FALSE(index.update(reader));
    EXPECT_EQ(reader.whole_reads, 1);
    EXPECT_EQ(index.generation(), generation);
    add(db, {anomaly("detected", "Jump", 2, 21, "exp_avg", 80)});  // the step-20 event reaches step 21
    EXPECT_TRUE(index.update(reader));
    EXPECT_EQ(reader.whole_reads, 2);
    EXPECT_NE(index.generation(), generation);
    ASSERT_EQ(index.incidents().size(), 2u);
    EXPECT_EQ(index.incidents()[1].members.size(), 3u);
    EXPECT_EQ(index.incidents()[1].last_step, 21);
}

TEST(IncidentIndex, marks_every_rank_of_a_severe_incident_and_no_rank_of_msprobes_noise) {
    TempDir tmp;
    const std::string db = tmp / "s.db";
    add(db, {anomaly("detected", "NonFinite", 0, 10, "actv", 100),
             anomaly("detected", "Jump", 1, 10, "grad_reduced", 5),  // weak alone; in the incident all the same
             anomaly("msprobe", "AnomalyTurbulence", 2, 3, "actv", 2)});
    CountingReader reader(db);
    IncidentIndex index;
    index.update(reader);
    EXPECT_EQ(index.incidents().size(), 2u);
    EXPECT_EQ(index.marks(), (std::vector<std::pair<int, std::int64_t>>{{0, 10}, {1, 10}}));
}

TEST(IncidentIndex, past_its_limit_it_reads_no_anomaly_whole_and_the_stores_marks_stand_in) {
    TempDir tmp;
    const std::string db = tmp / "s.db";
    add(db,
        {anomaly("detected", "NonFinite", 0, 10, "actv", 100), anomaly("detected", "Jump", 1, 10, "grad_reduced", 5),
         anomaly("msprobe", "AnomalyTurbulence", 2, 3, "actv", 2)});
    CountingReader reader(db);
    IncidentIndex index(2);
    EXPECT_TRUE(index.update(reader));
    EXPECT_FALSE(index.grouped());
    EXPECT_TRUE(index.over_limit());
    EXPECT_EQ(index.total(), 3);
    EXPECT_EQ(reader.whole_reads, 0);
    EXPECT_TRUE(index.incidents().empty());
    EXPECT_EQ(index.marks(), (std::vector<std::pair<int, std::int64_t>>{{0, 10}}));  // scored 20 or more
}

}  // namespace
}  // namespace msmon::test
