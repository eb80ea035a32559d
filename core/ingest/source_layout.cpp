// Name-based classification of the output trees msprobe and MindFormers write: msprobe's
// rank run folders, anomaly dumps and module_struct.json; MindFormers' log folders and health_ckpts.json.
#include "core/ingest/source_layout.hpp"

#include "core/layout/monitor_layout.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

constexpr std::int64_t kMaxFolderRank = 1000000;

std::optional<int> rank_suffix(std::string_view name, std::string_view prefix) {
    if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
    auto r = parse_int(name.substr(prefix.size()));
    if (!r || *r < 0 || *r > kMaxFolderRank) return std::nullopt;
    return static_cast<int>(*r);
}

// "rank" or "rank_", then a signed run of digits: a rank folder's name, whatever the number.
bool named_as_rank(std::string_view name) {
    std::string_view rest = name.substr(0, 4) == "rank" ? name.substr(4) : std::string_view();
    if (rest.substr(0, 1) == "_") rest.remove_prefix(1);
    if (!rest.empty() && (rest[0] == '-' || rest[0] == '+')) rest.remove_prefix(1);
    return !rest.empty() && rest.find_first_not_of("0123456789") == std::string_view::npos;
}

bool ranks_below(DirRole parent) {
    return parent == DirRole::root || parent == DirRole::tb_root || parent == DirRole::anomaly_root ||
           parent == DirRole::struct_root || parent == DirRole::mf_log_root;
}

// events.out.tfevents.<unix seconds>.<host>[...]: read oldest first, so a relaunch's values come last.
std::optional<std::int64_t> event_file_order(std::string_view name) {
    constexpr std::string_view prefix = "events.out.tfevents.";
    if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
    const std::string_view rest = name.substr(prefix.size());
    return parse_int(rest.substr(0, rest.find('.'))).value_or(0);
}

bool is_tensorboard_dir_name(std::string_view name) {
    return !is_csv2tb_dir_name(name) && (name.find("tensorboard") != std::string_view::npos || name == "tb");
}

}  // namespace

std::optional<std::string> unreadable_rank_dir(DirRole parent, std::string_view name) {
    if (!ranks_below(parent) || !named_as_rank(name) || rank_suffix(name, "rank_") || rank_suffix(name, "rank"))
        return std::nullopt;
    return "named as a rank folder, but its number is no rank msmon reads (0 to " + std::to_string(kMaxFolderRank) +
           "): not read";
}

bool is_csv2tb_dir_name(std::string_view name) {
    constexpr std::string_view suffix = "csv2tensorboard_by_step";
    return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
}

std::optional<DirClass> classify_child_dir(DirRole parent, std::string_view name) {
    switch (parent) {
        case DirRole::root:
            if (auto run = parse_run_dir_name(name))
                return DirClass{DirRole::run_v1, run->rank, run->time_label, run->uid};
            if (auto rank = parse_v2_rank_dir_name(name)) return DirClass{DirRole::run_v2, *rank, "", ""};
            if (name == "monitor_output" || name == "output") return DirClass{DirRole::root, 0, "", ""};
            if (name == "anomaly_detected") return DirClass{DirRole::anomaly_root, 0, "", ""};
            if (name == "module_struct") return DirClass{DirRole::struct_root, 0, "", ""};
            if (name == "log" || name.substr(0, 4) == "log_") return DirClass{DirRole::mf_log_root, 0, "", ""};
            if (name == "msrun_log") return DirClass{DirRole::mf_msrun, 0, "", ""};
            if (is_tensorboard_dir_name(name)) return DirClass{DirRole::tb_root, 0, "", ""};
            return std::nullopt;
        case DirRole::tb_root:
            if (auto r = rank_suffix(name, "rank_")) return DirClass{DirRole::tb_rank, *r, "", ""};
            if (auto r = rank_suffix(name, "rank")) return DirClass{DirRole::tb_rank, *r, "", ""};
            if (unreadable_rank_dir(parent, name)) return std::nullopt;
            return DirClass{DirRole::tb_root, 0, "", ""};  // train/, eval/, a run's own folder
        case DirRole::run_v2:  // a rank_<R> folder of event files: add_scalars' sub-writer folders
        case DirRole::tb_rank:
            return DirClass{DirRole::tb_rank, 0, "", ""};
        case DirRole::anomaly_root:
            if (auto r = rank_suffix(name, "rank")) return DirClass{DirRole::anomaly_rank, *r, "", ""};
            return std::nullopt;
        case DirRole::struct_root:
            if (auto r = rank_suffix(name, "rank")) return DirClass{DirRole::struct_rank, *r, "", ""};
            return std::nullopt;
        case DirRole::mf_log_root:
            if (auto r = rank_suffix(name, "rank_")) return DirClass{DirRole::mf_rank_log, *r, "", ""};
            return std::nullopt;
        default:
            return std::nullopt;
    }
}

// ---- each format's recogniser (FormatInfo::recognise) --------------------------------------------------------

bool recognise_csv_data(DirRole dir, int, std::string_view name, FileClass& c) {
    if (dir == DirRole::run_v1) {
        const auto csv = parse_v1_csv_name(name);
        if (!csv || csv->role != CsvRole::data) return false;
        c.kind = csv->kind;
        c.order = csv->first_step;
        c.last_step = csv->last_step;
        return true;
    }
    if (dir == DirRole::run_v2) {
        const auto csv = parse_v2_csv_name(name);
        if (!csv) return false;
        c.kind = csv->kind;
        c.v2 = true;
        c.order = csv->first_step;
        c.last_step = csv->last_step;
        return true;
    }
    return false;
}

bool recognise_csv_stack(DirRole dir, int, std::string_view name, FileClass& c) {
    if (dir != DirRole::run_v1) return false;
    const auto csv = parse_v1_csv_name(name);
    if (!csv || csv->role != CsvRole::stack_info) return false;
    c.csv_role = csv->role;
    c.kind = csv->kind;
    c.order = csv->first_step;
    return true;
}

// info.log (current) and its rotations info.log.1 (newest) .. info.log.5 (oldest): read oldest first.
bool recognise_info_log(DirRole dir, int, std::string_view name, FileClass& c) {
    if (dir != DirRole::run_v2 && dir != DirRole::mf_rank_log) return false;
    if (name == "info.log") {
        c.order = 0;
        return true;
    }
    if (name.substr(0, 9) != "info.log.") return false;
    const auto n = parse_int(name.substr(9));
    if (!n || *n < 1) return false;
    c.order = -*n;
    return true;
}

bool recognise_worker_log(DirRole dir, int, std::string_view name, FileClass& c) {
    if (dir != DirRole::mf_msrun && dir != DirRole::root) return false;
    if (name.size() <= 4 || name.substr(name.size() - 4) != ".log") return false;
    const auto r = rank_suffix(name.substr(0, name.size() - 4), "worker_");
    if (!r) return false;
    c.rank = *r;
    return true;
}

bool recognise_anomaly_dump(DirRole dir, int, std::string_view name, FileClass&) {
    return (dir == DirRole::anomaly_rank && name == "anomaly.json") ||
           (dir == DirRole::anomaly_root && name == "anomaly_analyse.json");
}

bool recognise_health(DirRole dir, int, std::string_view name, FileClass&) {
    return dir == DirRole::root && name == "health_ckpts.json";
}

// module_struct/rank<r>/module_struct.json, or (earlier msprobe versions) one module_struct.json in the output
// folder itself, for rank 0.
bool recognise_module_struct(DirRole dir, int, std::string_view name, FileClass&) {
    return (dir == DirRole::struct_rank || dir == DirRole::root) && name == "module_struct.json";
}

bool recognise_event_file(DirRole dir, int, std::string_view name, FileClass& c) {
    if (dir != DirRole::tb_root && dir != DirRole::tb_rank && dir != DirRole::run_v2 && dir != DirRole::root)
        return false;
    const auto order = event_file_order(name);
    if (!order) return false;
    c.order = *order;
    return true;
}

std::optional<FileClass> classify_file(DirRole dir, int dir_rank, std::string_view name) {
    for (const FormatInfo& f : all_formats()) {
        FileClass c;
        c.rank = dir_rank;
        c.format = f.format;
        if (f.recognise(dir, dir_rank, name, c)) return c;
    }
    return std::nullopt;
}

}  // namespace msmon
