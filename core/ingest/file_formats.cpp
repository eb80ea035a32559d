// The format table (see the header).
#include "core/ingest/file_formats.hpp"

#include <array>

#include "core/ingest/source_layout.hpp"

namespace msmon {

namespace {

using enum FileFormat;
using enum Growth;

constexpr std::array kFormats{
    FormatInfo{csv_data, "msprobe statistics CSV", recognise_csv_data, appended, true, false, false, "", ReaderId::csv},
    FormatInfo{csv_stack, "msprobe stack_info.csv", recognise_csv_stack, appended, true, false, false, "",
               ReaderId::csv},
    FormatInfo{log_file_sink, "MindFormers info.log", recognise_info_log, appended, false, true, true, "info_log",
               ReaderId::log},
    FormatInfo{log_stdout, "msrun worker log", recognise_worker_log, appended, false, true, true, "worker_log",
               ReaderId::log},
    FormatInfo{json_anomaly_dump, "msprobe anomaly dump", recognise_anomaly_dump, whole, false, false, false, "json",
               ReaderId::whole},
    FormatInfo{json_health, "MindFormers health_ckpts.json", recognise_health, whole, false, false, false, "json",
               ReaderId::whole},
    FormatInfo{json_module_struct, "msprobe module_struct.json", recognise_module_struct, whole, false, false, false,
               "json", ReaderId::whole},
    FormatInfo{tf_events, "TensorBoard event file", recognise_event_file, appended, false, false, true, "tf_events",
               ReaderId::events},
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
