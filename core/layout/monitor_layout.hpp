// What a path is in msprobe's output tree: a monitor root, a rank run folder, a CSV of some kind.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace msmon {

// A v1 rank run folder name: <Mon><DD>_<HH>-<MM>-<SS>-rank<N>-<8 hex>.
struct RunDirName {
    std::string time_label;  // "Nov22_13-55-47", Asia/Shanghai time, no year
    int rank = 0;
    std::string uid;  // 8 lowercase hex
};
std::optional<RunDirName> parse_run_dir_name(std::string_view name);
// "Nov22_13-55-47" as a number that sorts like msprobe's time_str2time_digit (it has no year); a MindFormers
// relaunch's label, its log time "2026-07-24 10:05:53,818", as a number that sorts by time (the two shapes never
// meet in one timeline); -1 if unreadable.
std::int64_t time_label_order(std::string_view label);

// monitor_v2 rank folder: rank_<r>.
std::optional<int> parse_v2_rank_dir_name(std::string_view name);

enum class CsvRole { data, stack_info };

// A CSV file name inside a run folder and what it holds.
struct CsvFileName {
    CsvRole role = CsvRole::data;
    std::string kind;  // msprobe prefix ("grad_reduced", "actv", ...) or the v2 slug
    std::int64_t first_step = 0;
    std::int64_t last_step = 0;
};
// v1: <prefix>_<start>-<end>[_part_<n>].csv with a known prefix, or stack_info.csv.
std::optional<CsvFileName> parse_v1_csv_name(std::string_view name);
// monitor_v2: <slug>_step<start>-<end>.csv (start may be negative) or <slug>.csv.
std::optional<CsvFileName> parse_v2_csv_name(std::string_view name);

// Folders under a monitor root that are not rank runs.
bool is_ignored_monitor_child(std::string_view name);

// Every v1 CSV prefix msprobe writes.
bool is_known_v1_prefix(std::string_view prefix);

}  // namespace msmon
