// Two shapes of one query. The inner SELECT combines a step's values across the matched names into one value v
// per (rank, step), as rank_block does; without a window those rows are the answer. With a window, an outer
// SELECT groups them by (rank, pixel column) and keeps, per group, the (step, value) pairs series_reduction
// keeps, each as an aggregate with a count saying whether it exists; the pairs are then merged per rank here.
#include "store/clickhouse/clickhouse_series.hpp"

#include <limits>
#include <map>

#include "store/clickhouse/clickhouse_rules_sql.hpp"
#include "store/clickhouse/row_binary.hpp"

namespace msmon {

namespace {

std::string per_step_sql(const RankSeriesRequest& req, const std::string& from_where, const std::string& step_filter,
                         bool pre_aggregated) {
    if (pre_aggregated)  // rank_steps: acc is the sum of squares, max, min or sum as op says
        return "SELECT rank, step, " + clickhouse_value_sql(req.op) +
               " AS v FROM (SELECT rank, step, nans, n, acc AS sq, acc AS mx, acc AS mn, acc AS total FROM " +
               from_where + step_filter + ")";
    return "SELECT rank, step, " + clickhouse_value_sql(req.op) +
           " AS v FROM (SELECT rank, step, countIf(isNaN(value)) AS nans, countIf(NOT isNaN(value)) AS n, "
           "sumIf(value * value, NOT isNaN(value)) AS sq, maxIf(value, NOT isNaN(value)) AS mx, "
           "minIf(value, NOT isNaN(value)) AS mn, sumIf(value, NOT isNaN(value)) AS total FROM " +
           from_where + step_filter + " GROUP BY rank, step)";
}

// A kept pair: the step and value aggregates, and the condition that must hold for it to exist.
struct KeptPair {
    const char* step;
    const char* value;
    const char* exists;  // a count > 0
};

// Conditions: fin = isFinite(v); pos = fin AND v > 0. Which pairs a group contributes depends on where it lies.
constexpr KeptPair kInside[] = {
    {"min(step)", "argMin(v, step)", "count()"},  // the rank's first point (extent), when this is its first group
    {"max(step)", "argMax(v, step)", "count()"},  // its latest point of any kind
    {"minIf(step, fin)", "argMinIf(v, step, fin)", "countIf(fin)"},
    {"maxIf(step, fin)", "argMaxIf(v, step, fin)", "countIf(fin)"},
    {"argMinIf(step, v, fin)", "minIf(v, fin)", "countIf(fin)"},
    {"argMaxIf(step, v, fin)", "maxIf(v, fin)", "countIf(fin)"},
    {"minIf(step, pos)", "argMinIf(v, step, pos)", "countIf(pos)"},
    {"maxIf(step, pos)", "argMaxIf(v, step, pos)", "countIf(pos)"},
    {"argMinIf(step, v, pos)", "minIf(v, pos)", "countIf(pos)"},
    {"argMaxIf(step, v, pos)", "maxIf(v, pos)", "countIf(pos)"},
    {"minIf(step, isNaN(v))", "nan", "countIf(isNaN(v))"},
    {"minIf(step, isInfinite(v) AND v > 0)", "inf", "countIf(isInfinite(v) AND v > 0)"},
    {"minIf(step, isInfinite(v) AND v < 0)", "-inf", "countIf(isInfinite(v) AND v < 0)"},
    {"maxIf(step, at_cursor)", "argMaxIf(v, step, at_cursor)", "countIf(at_cursor)"},
};
enum Pair : std::size_t { kFirstAny, kLastAny, kFirstFin, kLastFin, kFirstPos = 6, kLastPos = 7, kCursor = 13 };
constexpr std::size_t kPairs = std::size(kInside);
constexpr std::int64_t kStepsPerColumnWorthReducing = 8;

std::vector<RankSeries> every_step(const ClickHouseRows& rows, const std::string& sql) {
    RowBinaryReader r(rows(sql + " ORDER BY rank, step"));
    std::vector<RankSeries> out;
    while (!r.at_end()) {
        const int rank = r.i32();
        const std::int64_t step = r.i64();
        const double v = r.f64();
        if (out.empty() || out.back().rank != rank) out.push_back({rank, {}});
        out.back().points.push_back({step, v});
    }
    return out;
}

}  // namespace

std::vector<RankSeries> clickhouse_rank_series(const ClickHouseRows& rows, const RankSeriesRequest& req,
                                               const std::string& from_where, const std::string& extent_from_where,
                                               bool pre_aggregated) {
    std::string step_filter;
    std::int64_t lo = 0, hi = -1;
    const bool windowed = req.window.columns > 0;
    if (req.last_steps > 0 || (windowed && (!req.window.lo || !req.window.hi))) {
        RowBinaryReader r(rows("SELECT minMerge(min_step), maxMerge(max_step), count() FROM " + extent_from_where));
        lo = r.i64();
        hi = r.i64();
        if (r.u64() == 0) return {};
        if (req.last_steps > 0) {
            lo = hi - req.last_steps + 1;
            step_filter = " AND step >= " + std::to_string(lo);
        }
    }
    const std::string per_step = per_step_sql(req, from_where, step_filter, pre_aggregated);
    if (!windowed) return every_step(rows, per_step);
    if (req.window.lo) lo = *req.window.lo;
    if (req.window.hi) hi = *req.window.hi;
    const std::int64_t columns = req.window.columns;
    // Reduced here instead: spans where (step - lo) * columns would not fit Int64 in ClickHouse, and whole runs
    // of a few steps per column, which are few rows anyway and where the per-column aggregates cost more than
    // they save (clickhouse_query_bench: 2,000 steps on 400 columns read 140 ms at every step, 401 ms reduced).
    const bool whole_run = !req.window.lo && !req.window.hi;
    if (hi < lo || !clickhouse_can_split(lo, hi, static_cast<int>(columns)) ||
        (whole_run && hi - lo + 1 <= kStepsPerColumnWorthReducing * columns)) {
        auto out = every_step(rows, per_step);
        reduce_series(out, req.window);
        return out;
    }
    const std::string cursor = req.window.keep_step ? "step <= " + std::to_string(*req.window.keep_step) : "0";
    std::string sql = "SELECT rank, " + clickhouse_step_column_sql(lo, hi, static_cast<int>(columns)) + " AS col";
    for (const auto& p : kInside) sql += std::string(", ") + p.exists + ", " + p.step + ", toFloat64(" + p.value + ")";
    sql += " FROM (SELECT rank, step, v, isFinite(v) AS fin, fin AND v > 0 AS pos, " + cursor + " AS at_cursor FROM (" +
           per_step + ")) GROUP BY rank, col ORDER BY rank, col";
    RowBinaryReader r(rows(sql));
    std::vector<RankSeries> out;
    std::map<std::int64_t, double> kept;  // of the rank being read
    const auto finish = [&] {
        if (out.empty()) return;
        for (const auto& [step, v] : kept) out.back().points.push_back({step, v});
        kept.clear();
    };
    std::int64_t cursor_step = std::numeric_limits<std::int64_t>::min();
    double cursor_value = 0;
    bool has_cursor = false;
    while (!r.at_end()) {
        const int rank = r.i32();
        const std::int64_t col = r.i64();
        if (out.empty() || out.back().rank != rank) {
            if (has_cursor) kept[cursor_step] = cursor_value;
            finish();
            out.push_back({rank, {}});
            has_cursor = false;
            cursor_step = std::numeric_limits<std::int64_t>::min();
        }
        const bool first_group = kept.empty();
        const bool left = col < 0, right = col >= columns;
        for (std::size_t i = 0; i < kPairs; ++i) {
            const auto exists = r.u64();
            const std::int64_t step = r.i64();
            const double v = r.f64();
            if (exists == 0) continue;
            bool keep;
            if (i == kFirstAny) keep = first_group;  // the rank's first point
            else if (i == kLastAny)
                keep = true;  // in a column, or the rank's last point (a left group's adds nothing drawn)
            else if (i == kCursor) keep = false;  // the latest over every group, added when the rank ends
            else if (left) keep = i == kLastFin || i == kLastPos;
            else if (right) keep = i == kFirstFin || i == kFirstPos;
            else keep = true;
            if (i == kCursor && step >= cursor_step) cursor_step = step, cursor_value = v, has_cursor = true;
            if (keep) kept[step] = v;
        }
    }
    if (has_cursor) kept[cursor_step] = cursor_value;
    finish();
    return out;
}

}  // namespace msmon
