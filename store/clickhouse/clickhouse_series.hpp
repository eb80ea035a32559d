// The Overview's and Chart's per-rank series over ClickHouse: combined per (rank, step) with rank_block's rules
// and, for a SeriesWindow, reduced per pixel column inside ClickHouse (store/series_reduction.hpp says what is
// kept), so a chart of a million steps moves a few thousand rows, not a million.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "store/reader.hpp"

namespace msmon {

// Runs a RowBinary query and returns its body.
using ClickHouseRows = std::function<std::string(const std::string& sql)>;

// `from_where`: "<db>.points FINAL WHERE …" selecting the (kind, op, names) of the request; steps are limited
// here by req.last_steps. `extent_from_where`: "<db>.series WHERE …" with the same conditions (the summary of
// first and last steps, store/clickhouse/clickhouse_schema.cpp).
// `pre_aggregated`: from_where reads rank_steps (one row per rank and step, every parameter) instead of points.
std::vector<RankSeries> clickhouse_rank_series(const ClickHouseRows& rows, const RankSeriesRequest& req,
                                               const std::string& from_where, const std::string& extent_from_where,
                                               bool pre_aggregated);

}  // namespace msmon
