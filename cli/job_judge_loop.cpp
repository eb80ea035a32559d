// One pass: poll step_ranks from the oldest step still of interest, judge the ready steps in order, then the late
// ranks and the stalls; sleep until the next poll or the next grace's end.
#include "cli/job_judge_loop.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <thread>

#include "cli/commands.hpp"
#include "cli/job_judge_outputs.hpp"
#include "core/judge/job_judge.hpp"
#include "core/judge/step_readiness.hpp"
#include "core/text/rank_ranges.hpp"
#include "store/clickhouse/clickhouse_job_feed.hpp"

namespace msmon {

namespace {

using Clock = std::chrono::steady_clock;

// Resuming after a restart: the steps judged before are read again (not written) this far back, so that replica
// groups, update histories and usual spreads are learned again before the first new step.
constexpr std::int64_t kResumeWarmup = 64;

// A replica tie held for late ranks is reported anyway once no step was judged for this long (and two graces).
constexpr std::chrono::seconds kHeldTieWait{60};

// The local ingest's settings, but a rank is stalled only once its rows have been missing for longer than a step's
// grace: the judge sees a rank's steps when its agent ships them (about once a second), not when they are written.
DetectorOptions judge_options(const JobJudgeOptions& o) {
    DetectorOptions d;
    d.stall_min_seconds = std::max(d.stall_min_seconds, std::chrono::duration<double>(o.grace).count());
    return d;
}

class Loop {
public:
    Loop(const JobJudgeOptions& o, JudgeOutputs& outputs)
        : o_(o),
          outputs_(outputs),
          feed_(o.target, o.job),
          judge_(judge_options(o), [this](const std::vector<std::string>& kinds, std::int64_t first,
                                          std::int64_t last) { return feed_.rows(kinds, first, last); }),
          readiness_(o.grace) {}

    void start() {
        if (const auto through = feed_.judged_through()) {
            spdlog::info("judge: job {} was judged through step {}; reading steps from {} again to learn", o_.job,
                         *through, *through - kResumeWarmup + 1);
            // Steps before the warm-up are not judged at all; the warm-up's are judged again and what they find
            // written again (the rows collapse), counted in the gauges only for ranks they were not judged with.
            readiness_.judged_before(*through - kResumeWarmup);
            judged_before_ = feed_.judged_ranks(*through - kResumeWarmup + 1);
        }
    }

    // One pass; false once everything is judged with `once`.
    bool pass() {
        const auto now = Clock::now();
        const std::int64_t from = readiness_.oldest_kept().value_or(std::numeric_limits<std::int64_t>::min());
        for (const auto& c : feed_.step_ranks(from)) readiness_.observe(c.step, c.rank, c.values, now);
        while (const auto step = readiness_.ready(Clock::now(), o_.once)) judge(*step);
        for (const auto& [step, ranks] : readiness_.take_late(Clock::now())) judge_late(step, ranks);
        if (!live_) {
            judge_.go_live();
            live_ = true;
        }
        for (const auto& [rank, step] : readiness_.newest()) judge_.advance(rank, step, now);
        write(judge_.stalls(now));
        const bool more = !o_.once || readiness_.ready(Clock::now(), true).has_value() || readiness_.next_late_due();
        // Replica ties held for late ranks: reported as they stand once nothing more will come (the end of --once),
        // or once nothing was judged for a while (the job stalled; the late ranks may never come).
        if (!more || Clock::now() - last_judged_ > std::max<Clock::duration>(2 * o_.grace, kHeldTieWait))
            write(judge_.release_held());
        outputs_.tick(readiness_.newest());
        return more;
    }

    Clock::time_point next_wake() const {
        auto at = Clock::now() + o_.poll;
        for (const auto due : {readiness_.next_due(), readiness_.next_late_due()})
            if (due) at = std::min(at, std::max(*due, Clock::now()));
        return at;
    }

private:
    void judge(std::int64_t step) {
        last_judged_ = Clock::now();
        const auto ranks = readiness_.mark_judged(step);
        auto rows = feed_.rows(JobJudge::kinds(), step, step);
        std::erase_if(rows, [&](const JobRow& r) { return !std::binary_search(ranks.begin(), ranks.end(), r.rank); });
        const auto found = judge_.judge_step(step, std::move(rows));
        if (const auto before = judged_before_.find(step); before != judged_before_.end()) {
            // Judged before the restart with some of these ranks. Everything found is written again (a finding's
            // row has the same key each time, and rows collapse): what was found then for a rank judged then was
            // written then, but not what it was waiting for (a replica tie held for late ranks that have come
            // since, and now name the copy that changed). Counted in the gauges only for ranks new to the step.
            const auto& judged = before->second;
            write(found, judged);
            if (!std::includes(judged.begin(), judged.end(), ranks.begin(), ranks.end()))
                feed_.write_judged(step, ranks, o_.name);
            return;
        }
        write(found);
        feed_.write_judged(step, ranks, o_.name);
        spdlog::debug("judge: step {} judged with {} ranks, {} anomalies", step, ranks.size(), found.size());
    }

    void judge_late(std::int64_t step, const std::vector<int>& late) {
        last_judged_ = Clock::now();
        spdlog::info("judge: rank(s) {} came to step {} after it was judged without them: judged now",
                     rank_ranges(late), step);
        write(judge_.judge_late(step, feed_.rows(JobJudge::kinds(), step, step), late));
        feed_.write_judged(step, readiness_.judged_ranks(step), o_.name);
    }

    // Writes `found`; the gauges count the findings of ranks not in `counted_before` (sorted).
    void write(const std::vector<AnomalyRecord>& found, const std::vector<int>& counted_before = {}) {
        if (found.empty()) return;
        feed_.write_anomalies(found);
        std::vector<AnomalyRecord> counted;
        for (const auto& a : found) {
            spdlog::info("judge: {} rank {} step {}: {}", a.rule, a.rank, a.step, a.message);
            if (!std::binary_search(counted_before.begin(), counted_before.end(), a.rank)) counted.push_back(a);
        }
        outputs_.found(counted);
    }

    const JobJudgeOptions& o_;
    JudgeOutputs& outputs_;
    ClickHouseJobFeed feed_;
    JobJudge judge_;
    StepReadiness readiness_;
    std::map<std::int64_t, std::vector<int>> judged_before_;  // the warm-up's steps: the ranks judged then
    bool live_ = false;
    Clock::time_point last_judged_ = Clock::now();
};

}  // namespace

int run_job_judge(const JobJudgeOptions& options, const volatile std::sig_atomic_t& stop) {
    JudgeOutputs outputs(
        {options.target, options.job, options.on_incident, options.on_incident_timeout, options.prom_dir});
    struct Finish {
        JudgeOutputs& outputs;
        bool once;
        ~Finish() { outputs.finish(once); }
    } finish{outputs, options.once};
    outputs.start();
    std::unique_ptr<Loop> loop;
    while (!stop) {
        try {
            if (!loop) {
                loop = std::make_unique<Loop>(options, outputs);
                loop->start();
            }
            if (!loop->pass()) return kExitOk;
        } catch (const ClickHouseUnreachable& e) {
            if (stop) break;  // a request given up because the judge is stopping
            spdlog::warn("judge: ClickHouse unreachable ({}); trying again", e.what());
            loop.reset();  // start again from what ClickHouse says was judged
            const auto again = Clock::now() + std::chrono::seconds(1);
            while (!stop && Clock::now() < again) std::this_thread::sleep_for(std::chrono::milliseconds(20));
            continue;
        } catch (const ClickHouseError& e) {
            spdlog::error("judge: ClickHouse refused a query: {}", e.what());
            return kExitFailure;
        }
        const auto wake = loop->next_wake();
        while (!stop && Clock::now() < wake) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return kExitOk;
}

}  // namespace msmon
