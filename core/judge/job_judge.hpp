// The checks that compare ranks, run over the whole job (every node's ranks) by the job-level judge
// (`msmon judge`, docs/cluster.md). The rules are the local ingest's own — CrossRankCheck (replicas, cross-rank
// outliers, the optimizer's step) and StallWatch — fed with the job's rows instead of one node's files, so a job
// judged here and one local ingest of all its ranks find the same. What decides that a step is complete is the
// caller's (core/judge/step_readiness.hpp): judge_step() judges what it is given.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/detect/detector_options.hpp"
#include "core/judge/job_row.hpp"
#include "core/model/anomaly_record.hpp"

namespace msmon {

class JobJudge {
public:
    using Clock = std::chrono::steady_clock;
    // Rows of `kinds` at steps [first, last], for steps whose values were dropped from memory (a budget) and are
    // read back when judged.
    using ReadBack = std::function<std::vector<JobRow>(const std::vector<std::string>& kinds, std::int64_t first,
                                                       std::int64_t last)>;

    JobJudge(DetectorOptions options, ReadBack read_back);
    ~JobJudge();

    // The kinds the judge reads: what CrossRankCheck compares across ranks, and MindFormers' learning rate (named
    // in messages).
    static const std::vector<std::string>& kinds();
    // Judges `step` with the rows given (every rank that came); the steps before it must have been given first.
    std::vector<AnomalyRecord> judge_step(std::int64_t step, std::vector<JobRow> rows);
    // Judges `late_ranks`' rows at `step`, judged before without them, against every rank's `rows` there.
    std::vector<AnomalyRecord> judge_late(std::int64_t step, std::vector<JobRow> rows,
                                          const std::vector<int>& late_ranks);
    // A replica tie among the ranks judged on time waits for the late ones, which can break it (up to
    // StepReadiness::kLateWindow steps). Every tie still waiting, reported as it stands: nothing more will come.
    std::vector<AnomalyRecord> release_held();
    // Stalls: each rank's newest step as seen at `now` (live: after the first catch-up), and the ranks stalled.
    void go_live();
    void advance(int rank, std::int64_t step, Clock::time_point now);
    std::vector<AnomalyRecord> stalls(Clock::time_point now);

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace msmon
