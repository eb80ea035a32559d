// Which folders and files under a monitored root msmon follows, and as what — decided from names alone.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/ingest/tracked_file.hpp"

namespace msmon {

enum class DirRole : int {
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
    tb_root,       // a TensorBoard log folder (tensorboard_dir): rank_<R>/ below it, event files anywhere
    tb_rank,       // tensorboard_dir/rank_<R>/ and every folder below it (add_scalars' sub-writers), rank R
};

struct DirClass {
    DirRole role = DirRole::root;
    int rank = 0;
    std::string time_label, uid;
};

// What a child folder of a folder with role `parent` is; nullopt if msmon does not follow it. Below a tb_rank
// folder the rank is the parent's: the caller sets it.
std::optional<DirClass> classify_child_dir(DirRole parent, std::string_view name);

// A child folder named as a rank folder of `parent` ("rank<N>", "rank_<N>") whose number is no rank msmon reads
// ("rank-1", "rank99999999999999999999"): why it is not read. nullopt for any other name. classify_child_dir does not
// follow such a folder (its files were once read as rank 0's).
std::optional<std::string> unreadable_rank_dir(DirRole parent, std::string_view name);

struct FileClass {
    FileFormat format = FileFormat::csv_data;
    CsvRole csv_role = CsvRole::data;
    std::string kind;  // msprobe prefix / v2 slug
    int rank = 0;
    bool v2 = false;
    std::int64_t order = 0;       // reading order among siblings: step range start, or age for rotated logs
    std::int64_t last_step = -1;  // a statistics CSV's step range end
};

// What a file in a folder with role `dir` (rank `dir_rank`) is; nullopt if msmon does not read it. Asks each
// format's recogniser (core/ingest/file_formats.hpp).
std::optional<FileClass> classify_file(DirRole dir, int dir_rank, std::string_view name);

// The recognisers, one per format (the format table names them).
bool recognise_csv_data(DirRole dir, int dir_rank, std::string_view name, FileClass& out);
bool recognise_csv_stack(DirRole dir, int dir_rank, std::string_view name, FileClass& out);
bool recognise_info_log(DirRole dir, int dir_rank, std::string_view name, FileClass& out);
bool recognise_worker_log(DirRole dir, int dir_rank, std::string_view name, FileClass& out);
bool recognise_anomaly_dump(DirRole dir, int dir_rank, std::string_view name, FileClass& out);
bool recognise_health(DirRole dir, int dir_rank, std::string_view name, FileClass& out);
bool recognise_module_struct(DirRole dir, int dir_rank, std::string_view name, FileClass& out);
bool recognise_event_file(DirRole dir, int dir_rank, std::string_view name, FileClass& out);

// What msmon looks for, for a folder where it found nothing ("nothing msmon reads under DIR: it looks for ...").
inline constexpr const char* kWhatMsmonReads =
    "msprobe rank folders (<Mon><DD>_<HH>-<MM>-<SS>-rank<N>-<id8>, monitor_v2's rank_<N>) with their CSVs, "
    "anomaly_detected/ and module_struct/; MindFormers' log/rank_<R>/info.log, msrun_log/worker_<R>.log and "
    "health_ckpts.json; TensorBoard event files (events.out.tfevents.*), in the folder and in folders of any "
    "name down to 4 levels below it";

// msprobe's csv2tb output folder (<time>-csv2tensorboard_by_step): a copy of CSVs msmon reads anyway, so it
// is not followed below a root, only when given as a root itself.
bool is_csv2tb_dir_name(std::string_view name);

}  // namespace msmon
