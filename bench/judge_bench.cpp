// The job-level judge (msmon judge) against a running ClickHouse (bench/judge_bench.sh starts one on loopback). A
// job of --ranks ranks (8-way tensor parallel: rank r holds shard r % 8, so ranks of one shard are replicas) x
// --tensors rows per rank and step (grad_reduced, param_origin, param_updated and exp_avg of tensors/4 parameters,
// 4 statistics each) is written into points step by step, as the agents' INSERTs land, through the same
// materialized views; one replica's reduced gradient is planted off at --fault-step. Two phases, each with a judge
// of its own (a new job each):
//   paced    a step is written once the one before is judged: latency from the step's INSERT returning (its last
//            row) to judged_steps recording it, and to the planted incident written
//   backlog  --steps steps written first, then the judge started: steps judged per second
// Prints one JSON document; times in milliseconds, medians and p90 over the steps.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "store/clickhouse/clickhouse_schema.hpp"

extern char** environ;

using namespace msmon;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
    std::string url, msmon = "build/msmon";
    long ranks = 256, tensors = 200, steps = 12, fault_step = 8, fault_rank = 13, grace_ms = 60000;
};

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

// One step of the job as one INSERT (every rank's rows: what all agents ship for it).
void write_step(const ClickHouseClient& client, const std::string& db, const std::string& job, const Options& o,
                long step) {
    const long rows = o.ranks * o.tensors * 4;
    const std::string R = std::to_string(o.ranks), S = std::to_string(step);
    // n -> rank (fastest), op, kind, parameter; a value depends on (step, shard, kind, parameter, op) only.
    client.query(
        "INSERT INTO " + db +
        ".points (job, node, spool, seq, rank, run, kind, vpp_stage, name, micro_step, step, op, op_ord, tensor_ord, "
        "is_text, value, text) SELECT '" +
        job + "', concat('node', toString(intDiv(r, 8))), 1, " + S +
        " * 1000000000 + n, r, concat('Nov28_00-00-00-rank', "
        "toString(r), '-00000000'), ['grad_reduced', 'param_origin', 'param_updated', 'exp_avg'][k + 1], '0', "
        "concat('module.layers.', toString(intDiv(p, 4)), '.mlp.linear_fc', toString(p % 4), '.weight'), -1, " +
        S +
        ", ['min', 'max', 'norm', 'mean'][op + 1], op, p * 4 + k, 0, base * [-0.1, 0.11, 1, 0.001][op + 1], '' "
        "FROM (SELECT n, r, op, k, p, (1 + p) * (1 + 0.01 * " +
        S + ") * (1 + (r % 8) * 0.1) * [1, 20, 20.02 + 0.001 * (" + S + " % 3), 0.5][k + 1] * if(" + S + " = " +
        std::to_string(o.fault_step) + " AND r = " + std::to_string(o.fault_rank) +
        " AND k = 0 AND p = 7, 1.5, 1) AS base FROM (SELECT number AS n, toInt32(n % " + R + ") AS r, intDiv(n, " + R +
        ") % 4 AS op, intDiv(n, " + R + " * 4) % 4 AS k, intDiv(n, " + R + " * 16) AS p FROM numbers(" +
        std::to_string(rows) + ")))");
}

long scalar(const ClickHouseClient& client, const std::string& sql) {
    return std::atol(client.query(sql).c_str());
}

pid_t start_judge(const Options& o, const std::string& job) {
    // The grace above the time a step's INSERT takes here (~5 s at 1,024 ranks here, ~20 s at 4,096): the server makes
    // the rows visible a block of ~1M at a time while it runs, and a step must be judged once it is all there, not
    // after a grace that ended half-way through its INSERT (agents ship a node's step in one INSERT of its own).
    std::vector<std::string> args = {o.msmon, "judge",     "--store", o.url,        "--job",
                                     job,     "--poll-ms", "100",     "--grace-ms", std::to_string(o.grace_ms)};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    if (posix_spawn(&pid, o.msmon.c_str(), nullptr, nullptr, argv.data(), environ) != 0) return -1;
    return pid;
}

long peak_rss_kib(pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
    return -1;
}

void stop(pid_t pid) {
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--clickhouse") o.url = argv[i + 1];
        else if (a == "--msmon") o.msmon = argv[i + 1];
        else if (a == "--ranks") o.ranks = std::stol(argv[i + 1]);
        else if (a == "--tensors") o.tensors = std::stol(argv[i + 1]);
        else if (a == "--steps") o.steps = std::stol(argv[i + 1]);
        else if (a == "--fault-step") o.fault_step = std::stol(argv[i + 1]);
        else if (a == "--grace-ms") o.grace_ms = std::stol(argv[i + 1]);
    }
    std::string error;
    const auto target = parse_clickhouse_url(o.url, error);
    if (!target || o.ranks < 16 || o.tensors < 32 || o.tensors % 4 || o.steps <= o.fault_step) {
        std::fprintf(stderr,
                     "usage: judge_bench --clickhouse clickhouse://HOST:PORT/DB [--msmon PATH] [--ranks N>=16] "
                     "[--tensors N >= 32, a multiple of 4] [--steps N] [--fault-step S < N] [--grace-ms MS] %s\n",
                     error.c_str());
        return 2;
    }
    const std::string db = target->database;
    ClickHouseClient client(*target, std::chrono::milliseconds(600000));
    ensure_clickhouse_schema(client);
    const std::string where = " WHERE job = ";
    nlohmann::json out;
    out["ranks"] = o.ranks;
    out["tensors_per_rank"] = o.tensors;
    out["values_per_step"] = o.ranks * o.tensors * 4;
    out["judge_grace_ms"] = o.grace_ms;
    out["fault"] =
        "grad_reduced x1.5 on rank " + std::to_string(o.fault_rank) + " at step " + std::to_string(o.fault_step);

    // Paced: each step judged before the next is written.
    {
        const std::string job = "paced";
        const pid_t judge = start_judge(o, job);
        std::vector<double> insert_ms, judged_ms;
        double incident_ms = -1;
        for (long step = 0; step < o.steps; ++step) {
            const auto t0 = Clock::now();
            write_step(client, db, job, o, step);
            insert_ms.push_back(ms_since(t0));
            const auto written = Clock::now();
            const std::string judged_sql = "SELECT count() FROM " + db + ".judged_steps" + where + "'" + job +
                                           "' AND step = " + std::to_string(step);
            while (scalar(client, judged_sql) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
            judged_ms.push_back(ms_since(written));
            if (step == o.fault_step) {
                while (scalar(client, "SELECT count() FROM " + db + ".anomalies" + where + "'" + job +
                                          "' AND node = '' AND step = " + std::to_string(step)) == 0)
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                incident_ms = ms_since(written);
            }
        }
        // The first step has no step before it to be complete against: it waits the grace.
        const double first_ms = judged_ms.front();
        judged_ms.erase(judged_ms.begin());
        out["paced"] = {{"insert_ms_median", percentile(insert_ms, 0.5)},
                        {"first_step_judged_after_last_row_ms", first_ms},
                        {"judged_after_last_row_ms_median", percentile(judged_ms, 0.5)},
                        {"judged_after_last_row_ms_p90", percentile(judged_ms, 0.9)},
                        {"incident_written_after_last_row_ms", incident_ms},
                        {"judge_peak_rss_mib", static_cast<double>(peak_rss_kib(judge)) / 1024}};
        auto& incidents = out["paced"]["incidents"] = nlohmann::json::array();
        const std::string rows = client.query("SELECT rule, rank, step, kind, name FROM " + db + ".anomalies FINAL" +
                                              where + "'" + job + "' AND node = '' FORMAT JSONEachRow");
        for (std::size_t at = 0; at < rows.size();) {
            const auto nl = rows.find('\n', at);
            if (nl > at) incidents.push_back(nlohmann::json::parse(rows.substr(at, nl - at)));
            if (nl == std::string::npos) break;
            at = nl + 1;
        }
        stop(judge);
    }
    // Backlog: every step there first, then one judge.
    {
        const std::string job = "backlog";
        for (long step = 0; step < o.steps; ++step) write_step(client, db, job, o, step);
        const auto t0 = Clock::now();
        const pid_t judge = start_judge(o, job);
        const std::string last = "SELECT count() FROM " + db + ".judged_steps" + where + "'" + job +
                                 "' AND step = " + std::to_string(o.steps - 1);
        while (scalar(client, last) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const double s = ms_since(t0) / 1000;
        out["backlog"] = {{"steps", o.steps},
                          {"seconds", s},
                          {"steps_per_second", static_cast<double>(o.steps) / s},
                          {"judge_peak_rss_mib", static_cast<double>(peak_rss_kib(judge)) / 1024}};
        stop(judge);
    }
    std::printf("%s\n", out.dump(1).c_str());
    return 0;
}
