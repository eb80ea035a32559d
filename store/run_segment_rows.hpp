// Every run of a store as a segment (core/layout/run_segments.hpp): its rank, format, folder and the steps it holds,
// ordered and with the stretches a restart abandoned. Read from run_range (schema 9), or for an older store from
// the chunks themselves (a scan of their index).
#pragma once

#include <vector>

#include "core/layout/run_segments.hpp"
#include "store/sqlite_handle.hpp"

namespace msmon {

std::vector<RunSegment> read_run_segments(Connection& conn, bool has_run_range);

}  // namespace msmon
