// The Health view's run-config page as lines: each distinct config with the ranks that wrote it, every key
// and its text escaped for the terminal, long lines wrapped to the width.
#pragma once

#include <string>
#include <vector>

#include "tui/models/run_config_model.hpp"
#include "tui/screen_buffer.hpp"

namespace msmon::tui {

struct PageLine {
    std::string text;
    Style style;
};

std::vector<PageLine> run_config_lines(const RunConfigModel& model, int width);

}  // namespace msmon::tui
