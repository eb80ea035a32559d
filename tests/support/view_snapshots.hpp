// Frames of msmon-tui's views as `--snapshot` prints them: one view, one size, one locale; lines as cells.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tests/support/test_env.hpp"

namespace msmon::test {

// The environment msmon-tui runs in for a snapshot: isolated (isolated_env) under the locale `locale`
// ("C", "C.UTF-8") for both LANG and LC_ALL.
std::map<std::string, std::string> snapshot_env(const TempDir& tmp, const std::string& locale);

// `msmon-tui --db DB [--config CONFIG] --snapshot VIEW --size SIZE` under `locale`.
CommandResult view_snapshot(const TempDir& tmp, const std::string& db, const std::string& config,
                            const std::string& view, const std::string& size, const std::string& locale);

// A snapshot's lines, each as its cells' characters (UTF-8 decoded; one code point a cell, as the fixtures'
// text has no wide characters).
std::vector<std::u32string> frame_cells(const std::string& text);

// The names `--snapshot` takes, one a tab, in the tab bar's order.
std::vector<std::string> view_names();

}  // namespace msmon::test
