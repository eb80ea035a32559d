// The format table (see the header).
#include "core/ingest/file_formats.hpp"

#include <array>

#include "core/ingest/source_layout.hpp"

namespace msmon {

namespace {

using enum FileFormat;
using enum Growth;

constexpr std::array kFormats{
    FormatInfo{.format = csv_data,
               .name = "msprobe statistics CSV",
               .recognise = recognise_csv_data,
               .growth = appended,
               .forgotten_when_read = true,
               .rotates = false,
               .mindformers_run = false,
               .stored_kind = "",
               .reader = ReaderId::csv,
               .line_records = true,
               .times_steps = true,
               .settings_first = false},
    FormatInfo{.format = csv_stack,
               .name = "msprobe stack_info.csv",
               .recognise = recognise_csv_stack,
               .growth = appended,
               .forgotten_when_read = true,
               .rotates = false,
               .mindformers_run = false,
               .stored_kind = "",
               .reader = ReaderId::csv,
               .line_records = true,
               .times_steps = false,
               .settings_first = false},
    FormatInfo{.format = log_file_sink,
               .name = "MindFormers info.log",
               .recognise = recognise_info_log,
               .growth = appended,
               .forgotten_when_read = false,
               .rotates = true,
               .mindformers_run = true,
               .stored_kind = "info_log",
               .reader = ReaderId::log,
               .line_records = true,
               .times_steps = false,
               .settings_first = false},
    FormatInfo{.format = log_stdout,
               .name = "msrun worker log",
               .recognise = recognise_worker_log,
               .growth = appended,
               .forgotten_when_read = false,
               .rotates = true,
               .mindformers_run = true,
               .stored_kind = "worker_log",
               .reader = ReaderId::log,
               .line_records = true,
               .times_steps = false,
               .settings_first = true},
    FormatInfo{.format = json_anomaly_dump,
               .name = "msprobe anomaly dump",
               .recognise = recognise_anomaly_dump,
               .growth = whole,
               .forgotten_when_read = false,
               .rotates = false,
               .mindformers_run = false,
               .stored_kind = "json",
               .reader = ReaderId::whole,
               .line_records = false,
               .times_steps = false,
               .settings_first = false},
    FormatInfo{.format = json_health,
               .name = "MindFormers health_ckpts.json",
               .recognise = recognise_health,
               .growth = whole,
               .forgotten_when_read = false,
               .rotates = false,
               .mindformers_run = false,
               .stored_kind = "json",
               .reader = ReaderId::whole,
               .line_records = false,
               .times_steps = false,
               .settings_first = false},
    FormatInfo{.format = json_module_struct,
               .name = "msprobe module_struct.json",
               .recognise = recognise_module_struct,
               .growth = whole,
               .forgotten_when_read = false,
               .rotates = false,
               .mindformers_run = false,
               .stored_kind = "json",
               .reader = ReaderId::whole,
               .line_records = false,
               .times_steps = false,
               .settings_first = false},
    FormatInfo{.format = tf_events,
               .name = "TensorBoard event file",
               .recognise = recognise_event_file,
               .growth = appended,
               .forgotten_when_read = false,
               .rotates = false,
               .mindformers_run = true,
               .stored_kind = "tf_events",
               .reader = ReaderId::events,
               .line_records = false,
               .times_steps = false,
               .settings_first = true},
};

constexpr bool in_enum_order() {
    for (std::size_t i = 0; i < kFormats.size(); ++i)
        if (static_cast<std::size_t>(kFormats[i].format) != i) return false;
    return true;
}
static_assert(in_enum_order(), "kFormats lists every FileFormat once, in its order");

}  // namespace

std::span<const FormatInfo> all_formats() {
    return kFormats;
}

const FormatInfo& format_info(FileFormat f) {
    return kFormats[static_cast<std::size_t>(f)];
}

FileFormat format_of_stored(std::string_view stored_kind, std::string_view file_name) {
    if (stored_kind.empty()) return file_name == "stack_info.csv" ? csv_stack : csv_data;
    // The JSON documents share a stored kind: their names tell them apart.
    if (stored_kind == format_info(json_anomaly_dump).stored_kind)
        return file_name == "health_ckpts.json"    ? json_health
               : file_name == "module_struct.json" ? json_module_struct
                                                   : json_anomaly_dump;
    for (const FormatInfo& f : kFormats)
        if (f.stored_kind == stored_kind) return f.format;
    return file_name == "stack_info.csv" ? csv_stack : csv_data;  // a CSV's kind ("actv", "grad_reduced", ...)
}

}  // namespace msmon
