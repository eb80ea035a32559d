// The job's rows become the local ingest's rows (runs, tensors and layouts interned in a registry that lives only
// in memory), and go through the same CrossRankCheck the local ingest runs. Nothing is committed anywhere: the
// store behind the registry holds nothing, and reads back dropped steps from the job's store.
#include "core/judge/job_judge.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include "core/detect/cross_rank_check.hpp"
#include "core/detect/stall_watch.hpp"
#include "core/judge/step_readiness.hpp"
#include "core/layout/monitor_layout.hpp"
#include "core/model/key_registry.hpp"

namespace msmon {

namespace {

bool is_mindformers_row(const JobRow& r) {
    return r.ops.size() == 1 && r.ops[0] == "value";
}

std::string joined(const std::vector<std::string>& ops) {
    std::string out;
    for (const auto& op : ops) out += (out.empty() ? "" : ",") + op;
    return out;
}

}  // namespace

// The registry's store: empty, and reading back from the job's store.
class JobRowsStore : public IngestStore {
public:
    JobRowsStore(JobJudge::ReadBack read_back, std::function<std::vector<StoredSample>(std::vector<JobRow>)> intern)
        : read_back_(std::move(read_back)), intern_(std::move(intern)) {}
    IngestSnapshot load_snapshot() override { return {}; }
    std::optional<FileProgress> load_file(const std::string&) override { return std::nullopt; }
    std::vector<TensorInfo> load_tensors(std::int64_t) override { return {}; }
    std::vector<DetectorStateRecord> load_detector_states(const std::vector<std::int64_t>&) override { return {}; }
    std::vector<StoredSample> load_samples(const std::string& kind, std::int64_t first, std::int64_t last) override {
        return intern_(read_back_({kind}, first, last));
    }
    void commit(const RecordBatch&) override {}

private:
    JobJudge::ReadBack read_back_;
    std::function<std::vector<StoredSample>(std::vector<JobRow>)> intern_;
};

struct JobJudge::State {
    State(DetectorOptions o, ReadBack read_back)
        : options(std::move(o)),
          store(std::move(read_back), [this](std::vector<JobRow> rows) { return intern(std::move(rows)); }),
          keys(store, IngestSnapshot{}),
          cross(store, keys, options, [](const std::string&) {}),
          stalls(options) {
        // Late ranks are judged while their step is within the readiness' window: a replica tie they could break
        // waits that long for them.
        cross.hold_ties_for_late(static_cast<std::int64_t>(StepReadiness::kLateWindow));
    }

    // Rows as the registry's samples, made in the agents' order (rank, then the tensor's place), so that a tensor
    // first seen here gets the ordinal it has on its node. A rank's run and a row's layout are looked up once per
    // change (rows come rank by rank with the same ops).
    std::vector<StoredSample> intern(std::vector<JobRow> rows) {
        std::vector<std::size_t> at(rows.size());
        std::iota(at.begin(), at.end(), 0);
        std::sort(at.begin(), at.end(), [&](std::size_t a, std::size_t b) {
            const JobRow &x = rows[a], &y = rows[b];
            return std::tie(x.step, x.rank, x.order, x.run) < std::tie(y.step, y.rank, y.order, y.run);
        });
        std::vector<StoredSample> out;
        out.reserve(rows.size());
        for (const std::size_t i : at) {
            const JobRow& r = rows[i];
            if (r.ops.empty() || r.ops.size() != r.values.size()) continue;
            StoredSample s;
            s.run_id = run_id_of(r);
            if (r.ops != last_ops) {
                last_ops = r.ops;
                last_layout = keys.layout_id(joined(r.ops), scratch);
            }
            s.row.tensor_id =
                keys.tensor_id(s.run_id, r.kind, r.vpp_stage, r.name,
                               r.micro_step >= 0 ? std::optional(r.micro_step) : std::nullopt, last_layout, scratch);
            s.row.step = r.step;
            s.row.layout_id = static_cast<std::int32_t>(last_layout);
            s.row.value_count = static_cast<std::int32_t>(std::min<std::size_t>(r.values.size(), kMaxNumericOps));
            std::copy_n(r.values.begin(), s.row.value_count, s.row.values);
            out.push_back(s);
        }
        scratch = RecordBatch{};  // the registry keeps what it interned; nothing is stored
        return out;
    }

    // `f(row, tensor, run)` for each of `rows` as the registry knows it.
    template <class F>
    void each_row(std::vector<JobRow> rows, F&& f) {
        for (const StoredSample& sample : intern(std::move(rows))) {
            const TensorInfo* t = keys.tensor(sample.row.tensor_id);
            const RunInfo* run = keys.run(sample.run_id);
            if (t && run) f(sample.row, *t, *run);
        }
    }

    std::int64_t run_id_of(const JobRow& r) {
        auto& [run, id] = run_of_rank[r.rank];
        if (run == r.run && id > 0) return id;
        RunInfo proto;
        proto.rank = r.rank;
        proto.path = r.run + "#" + std::to_string(r.rank);  // a MindFormers folder is every rank's
        proto.format = is_mindformers_row(r) ? "mindformers" : "msprobe";
        if (const auto name = parse_run_dir_name(r.run)) {
            proto.time_label = name->time_label;
            proto.uid = name->uid;
        }
        run = r.run;
        id = keys.run_id(proto, scratch);
        return id;
    }

    std::unordered_map<int, std::pair<std::string, std::int64_t>> run_of_rank;  // rank → its latest run, its id
    std::vector<std::string> last_ops;
    std::int64_t last_layout = 0;
    DetectorOptions options;
    JobRowsStore store;
    RecordBatch scratch;
    KeyRegistry keys;
    CrossRankCheck cross;
    StallWatch stalls;
};

JobJudge::JobJudge(DetectorOptions options, ReadBack read_back)
    : state_(std::make_unique<State>(std::move(options), std::move(read_back))) {}

JobJudge::~JobJudge() = default;

const std::vector<std::string>& JobJudge::kinds() {
    static const std::vector<std::string> k{"grad_reduced",  "grad_unreduced", "param_origin",
                                            "param_updated", "exp_avg",        "exp_avg_sq",
                                            "loss",          "global_norm",    "lr"};
    return k;
}

std::vector<AnomalyRecord> JobJudge::judge_step(std::int64_t step, std::vector<JobRow> rows) {
    State& s = *state_;
    s.each_row(std::move(rows),
               [&](const SampleRow& row, const TensorInfo& t, const RunInfo& run) { s.cross.collect(row, t, run); });
    RecordBatch batch;
    s.cross.evaluate_through(step, batch);
    return std::move(batch.anomalies);
}

std::vector<AnomalyRecord> JobJudge::judge_late(std::int64_t step, std::vector<JobRow> rows,
                                                const std::vector<int>& late_ranks) {
    State& s = *state_;
    s.each_row(std::move(rows), [&](const SampleRow& row, const TensorInfo& t, const RunInfo& run) {
        s.cross.collect_late(row, t, run);
    });
    RecordBatch batch;
    s.cross.judge_late(step, late_ranks, batch);
    return std::move(batch.anomalies);
}

std::vector<AnomalyRecord> JobJudge::release_held() {
    RecordBatch batch;
    state_->cross.release_held(batch);
    return std::move(batch.anomalies);
}

void JobJudge::go_live() {
    state_->stalls.go_live();
}

void JobJudge::advance(int rank, std::int64_t step, Clock::time_point now) {
    state_->stalls.advance(rank, 0, step, now);
}

std::vector<AnomalyRecord> JobJudge::stalls(Clock::time_point now) {
    std::vector<AnomalyRecord> out;
    state_->stalls.judge(now, out);
    return out;
}

}  // namespace msmon
