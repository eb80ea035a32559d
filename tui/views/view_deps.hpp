// What a view may be made with: the selection the views share, the incidents, the way to the chart, the monitor
// config the Config tab edits. Each tab's maker (tui/tab_table.hpp) takes what its view needs from here.
#pragma once

#include <functional>

#include "core/config/config_file.hpp"
#include "store/incident_index.hpp"
#include "tui/views/view.hpp"

namespace msmon::tui {

struct ViewDeps {
    SharedSelection& shared;
    IncidentIndex& incidents;
    std::function<void()> open_chart;  // Enter on an anomaly, a layer, a rank
    const ConfigTarget& config;        // path empty: no config given
};

}  // namespace msmon::tui
