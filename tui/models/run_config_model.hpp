// What the Health view's run-config page shows: the config each run wrote as text summaries (MindFormers puts
// every config key on TensorBoard's TEXT page), ranks with the same config shown once.
#pragma once

#include <string>
#include <vector>

#include "core/text/rank_ranges.hpp"
#include "store/reader.hpp"

namespace msmon::tui {

struct RunConfigGroup {
    std::vector<int> ranks;               // ascending; every rank whose runs wrote exactly these entries
    std::string source;                   // the first rank's folder
    std::vector<RunConfigEntry> entries;  // the first rank's, in the order written
};

struct RunConfigModel {
    std::vector<RunConfigGroup> groups;  // by lowest rank
    std::size_t entries = 0;             // text summaries in the store
};

RunConfigModel collect_run_config(Reader& reader);

}  // namespace msmon::tui
