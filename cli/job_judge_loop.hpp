// The job-level judge's loop: poll which ranks wrote which steps, judge each step once it is complete (or its
// grace passed), write the findings and the step back, and judge late ranks and stalls as they come.
#pragma once

#include <chrono>
#include <csignal>
#include <string>

#include "store/clickhouse/clickhouse_client.hpp"

namespace msmon {

struct JobJudgeOptions {
    ClickHouseTarget target;
    std::string job;
    std::string name;  // this judge's, for people (judged_steps.judge)
    std::chrono::milliseconds grace{5000};
    std::chrono::milliseconds poll{250};
    bool once = false;        // judge what is there, then return
    std::string on_incident;  // --on-incident CMD (empty: none)
    std::chrono::milliseconds on_incident_timeout{20000};
    std::string prom_dir;  // --prom-textfile DIR (empty: none)
};

// Runs until `stop` is set (or, with once, until everything there is judged). Returns the exit code; ClickHouse
// being unreachable is waited out (logged), a refused query is a failure.
int run_job_judge(const JobJudgeOptions& options, const volatile std::sig_atomic_t& stop);

}  // namespace msmon
