// Which folders and files under a monitored root msmon follows, and as what — decided from names alone.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/ingest/tracked_file.hpp"

namespace msmon {

enum class DirRole {
    root,          // a job folder, a monitor root, a MindFormers output folder: anything whose children matter
    run_v1,        // <time>-rank<N>-<uid>: msprobe CSVs
    run_v2,        // rank_<r>: monitor_v2 CSVs (or, given directly, a MindFormers rank log folder)
    anomaly_root,  // anomaly_detected/
    anomaly_rank,  // anomaly_detected/rank<r>/
    struct_root,   // module_struct/
    struct_rank,   // module_struct/rank<r>/
    mf_log_root,   // MindFormers log/ (or log_<suffix>/)
    mf_rank_log,   // log/rank_<R>/
    mf_msrun,      // msrun_log/
};

struct DirClass {
    DirRole role = DirRole::root;
    int rank = 0;
    std::string time_label, uid;
};

// What a child folder of a folder with role `parent` is; nullopt if msmon does not follow it.
std::optional<DirClass> classify_child_dir(DirRole parent, std::string_view name);

struct FileClass {
    FileFormat format = FileFormat::csv_data;
    CsvRole csv_role = CsvRole::data;
    std::string kind;  // msprobe prefix / v2 slug
    int rank = 0;
    bool v2 = false;
    std::int64_t order = 0;  // reading order among siblings: step range start, or age for rotated logs
};

// What a file in a folder with role `dir` (rank `dir_rank`) is; nullopt if msmon does not read it.
std::optional<FileClass> classify_file(DirRole dir, int dir_rank, std::string_view name);

}  // namespace msmon
