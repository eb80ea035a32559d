// Whole-job queries against a running ClickHouse (bench/clickhouse_query_bench.sh starts one on loopback): a job
// of --ranks ranks × --names parameters × --steps steps × 2 statistics is generated inside the server, then
// each query the TUI makes is timed --repeats times through the ClickHouse Reader. Also timed: the catalog as a
// scan of the values and the Overview aggregated from the values (what both were before the series and rank_steps
// summaries), and chart reads at every step vs reduced for a 400-pixel plot (rows moved and time). Prints one
// JSON document; medians in milliseconds.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store/clickhouse/clickhouse_reader.hpp"
#include "store/clickhouse/clickhouse_schema.hpp"

using namespace msmon;
using Clock = std::chrono::steady_clock;

namespace {

template <class F>
double median_ms(int repeats, F&& f) {
    std::vector<double> ms;
    for (int i = 0; i < repeats; ++i) {
        const auto t0 = Clock::now();
        f();
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

std::size_t points_of(const std::vector<RankSeries>& series) {
    std::size_t n = 0;
    for (const auto& rs : series) n += rs.points.size();
    return n;
}

}  // namespace

int main(int argc, char** argv) {
    std::string url;
    long ranks = 128, names = 40, steps = 2000;
    int repeats = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--clickhouse") url = argv[i + 1];
        else if (a == "--ranks") ranks = std::stol(argv[i + 1]);
        else if (a == "--names") names = std::stol(argv[i + 1]);
        else if (a == "--steps") steps = std::stol(argv[i + 1]);
        else if (a == "--repeats") repeats = std::stoi(argv[i + 1]);
    }
    std::string error;
    const auto target = parse_clickhouse_url(url, error);
    if (!target) {
        std::fprintf(stderr,
                     "usage: clickhouse_query_bench --clickhouse clickhouse://HOST:PORT/DB [--ranks N] [--names N] "
                     "[--steps N] [--repeats N]: %s\n",
                     error.c_str());
        return 2;
    }
    const std::string db = target->database;
    ClickHouseClient client(*target);
    const auto ddl = clickhouse_ddl(db);
    client.query(ddl[0]);  // the database
    client.query(ddl[1]);  // points only: the summaries are worked out when the reader opens (timed below)
    const long values = ranks * names * steps * 2;
    const auto t_gen = Clock::now();
    // number → (step, name, op, rank), rank fastest: values arrive step by step as the agents ship them.
    constexpr long kChunk = 2'000'000;  // values per INSERT: each well inside the client's 30 s timeout
    for (long offset = 0; offset < values; offset += kChunk) {
        const std::string n = "(number + " + std::to_string(offset) + ")";
        client.query("INSERT INTO " + db +
                     ".points (job, node, spool, seq, rank, run, kind, vpp_stage, name, micro_step, "
                     "step, op, op_ord, tensor_ord, is_text, value, text) SELECT 'bench', concat('node', "
                     "toString(intDiv(r, 8))), "
                     "1, n, r, 'run', 'grad_reduced', '', concat('layers.', toString(intDiv(n, " +
                     std::to_string(ranks * 2) + ") % " + std::to_string(names) + "), '.weight'), -1, intDiv(n, " +
                     std::to_string(ranks * 2 * names) + "), if(intDiv(n, " + std::to_string(ranks) +
                     ") % 2 = 0, 'norm', 'max'), if(intDiv(n, " + std::to_string(ranks) +
                     ") % 2 = 0, 0, 1), 0, 0, sin(n / 1e5) + (cityHash64(n) % 1000) / 1e4, '' "
                     "FROM (SELECT " +
                     n + " AS n, toInt32(n % " + std::to_string(ranks) + ") AS r FROM numbers(" +
                     std::to_string(std::min(kChunk, values - offset)) + "))");
    }
    const double gen_s = std::chrono::duration<double>(Clock::now() - t_gen).count();
    const auto t_open = Clock::now();
    auto reader = open_clickhouse_reader(*target, "bench");
    const double summarise_s = std::chrono::duration<double>(Clock::now() - t_open).count();

    nlohmann::json out;
    out["values"] = values;
    out["ranks"] = ranks;
    out["names"] = names;
    out["steps"] = steps;
    out["generate_s"] = gen_s;
    out["first_open_summarise_s"] = summarise_s;  // series and rank_steps from points, once per older store
    out["catalog_ms"] = median_ms(repeats, [&] { reader->catalog(); });
    out["catalog_by_scanning_values_ms"] = median_ms(repeats, [&] {
        client.query("SELECT kind, op FROM " + db +
                     ".points WHERE job = 'bench' AND is_text = 0 GROUP BY kind, op "
                     "ORDER BY kind, min(op_ord), op FORMAT Null");
        client.query("SELECT DISTINCT rank FROM " + db + ".points WHERE job = 'bench' ORDER BY rank FORMAT Null");
        client.query("SELECT min(step), max(step), count() FROM " + db + ".points WHERE job = 'bench' FORMAT Null");
    });
    out["rank_last_steps_ms"] = median_ms(repeats, [&] { reader->rank_last_steps(); });
    RankSeriesRequest overview{"grad_reduced", "norm", std::nullopt, 200, {}};
    out["overview_last_200_steps_ms"] = median_ms(repeats, [&] { reader->rank_series(overview); });
    RankSeriesRequest overview_from_points = overview;  // every name by a filter: aggregated from the values
    overview_from_points.name_regex = "weight";
    out["overview_last_200_steps_from_points_ms"] =
        median_ms(repeats, [&] { reader->rank_series(overview_from_points); });
    RankSeriesRequest every{"grad_reduced", "norm", "^layers\\." + std::to_string(names / 2) + "\\.weight$", 0, {}};
    std::size_t every_points = 0, reduced_points = 0;
    out["chart_one_name_every_step_ms"] =
        median_ms(repeats, [&] { every_points = points_of(reader->rank_series(every)); });
    RankSeriesRequest reduced = every;
    reduced.window.columns = 400;
    out["chart_one_name_reduced_400_columns_ms"] =
        median_ms(repeats, [&] { reduced_points = points_of(reader->rank_series(reduced)); });
    out["chart_every_step_points"] = every_points;
    out["chart_reduced_points"] = reduced_points;
    RankSeriesRequest all_every{"grad_reduced", "norm", std::nullopt, 0, {}};
    out["chart_all_names_every_step_ms"] = median_ms(repeats, [&] { reader->rank_series(all_every); });
    RankSeriesRequest all_reduced = all_every;
    all_reduced.window.columns = 400;
    out["chart_all_names_reduced_400_columns_ms"] = median_ms(repeats, [&] { reader->rank_series(all_reduced); });
    AnomalyGroupRequest page;
    out["anomaly_first_page_ms"] = median_ms(repeats, [&] { reader->anomaly_groups(page); });
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
}
